import Foundation
import Testing

@testable import WebAuthn

extension Array where Element == UInt8 {
    /// Bytes from lower-case or upper-case hex (test fixtures only).
    init(hex: String) {
        let digits = Array(hex.utf8)
        precondition(digits.count % 2 == 0, "odd hex length")
        self = stride(from: 0, to: digits.count, by: 2).map {
            UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)!
        }
    }
}

/// The relying party of the W3C vectors.
let exampleRP = RelyingParty(id: "example.org", name: "Example", origins: ["https://example.org"])

/// A minimal CBOR encoder for building test inputs (definite lengths only).
enum CBORWriter {
    static func head(_ major: UInt8, _ value: UInt64) -> [UInt8] {
        switch value {
        case ..<24: [major << 5 | UInt8(value)]
        case ..<0x100: [major << 5 | 24, UInt8(value)]
        case ..<0x10000: [major << 5 | 25, UInt8(value >> 8), UInt8(value & 0xff)]
        default: [major << 5 | 26] + (0..<4).reversed().map { UInt8((value >> (8 * UInt64($0))) & 0xff) }
        }
    }

    static func encode(_ item: CBOR) -> [UInt8] {
        switch item {
        case .unsigned(let n): head(0, n)
        case .negative(let n): head(1, n)
        case .bytes(let b): head(2, UInt64(b.count)) + b
        case .text(let t): head(3, UInt64(t.utf8.count)) + Array(t.utf8)
        case .array(let items): head(4, UInt64(items.count)) + items.flatMap(encode)
        case .map(let entries): head(5, UInt64(entries.count)) + entries.flatMap { encode($0.key) + encode($0.value) }
        case .tagged(let tag, let inner): head(6, tag) + encode(inner)
        case .bool(let b): [b ? 0xf5 : 0xf4]
        case .null: [0xf6]
        }
    }

    static func int(_ value: Int) -> CBOR { value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-1 - value)) }

    /// `{ "fmt": fmt, "attStmt": statement, "authData": authData }`.
    static func attestationObject(fmt: String, statement: [CBOR.Entry] = [], authData: [UInt8]) -> [UInt8] {
        encode(
            .map([
                .init(key: .text("fmt"), value: .text(fmt)),
                .init(key: .text("attStmt"), value: .map(statement)),
                .init(key: .text("authData"), value: .bytes(authData)),
            ]))
    }
}

/// The parts of an attestation object (decoded with the module's own CBOR).
func attestationParts(_ hex: String) -> (fmt: String, statement: [CBOR.Entry], authData: [UInt8]) {
    let object = try! CBOR.decode([UInt8](hex: hex))
    guard case .text(let fmt)? = object[text: "fmt"], case .map(let statement)? = object[text: "attStmt"],
        case .bytes(let authData)? = object[text: "authData"]
    else { fatalError("not an attestation object") }
    return (fmt, statement, authData)
}

/// clientDataJSON as a browser would send it.
func clientDataJSON(type: String, challenge: [UInt8], origin: String = "https://example.org", crossOrigin: Bool = false)
    -> [UInt8]
{
    Array(
        #"{"type":"\#(type)","challenge":"\#(base64url(challenge))","origin":"\#(origin)","crossOrigin":\#(crossOrigin)}"#
            .utf8)
}

func base64url(_ bytes: [UInt8]) -> String {
    Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

/// Runs `body` and returns the reason it threw, or nil when it did not throw.
func reason<T>(_ body: () throws -> T) -> WebAuthnError.Reason? {
    do {
        _ = try body()
        return nil
    } catch let error as WebAuthnError {
        return error.reason
    } catch {
        Issue.record("unexpected error \(error)")
        return nil
    }
}
