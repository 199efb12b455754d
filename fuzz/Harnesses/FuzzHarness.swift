import API
import Crypto
import Foundation
import HTTP
import JOSE
import WebAuthn

/// The parsers that read attacker bytes, each wrapped as a function of one
/// input. A harness may refuse its input (the parsers throw), but must never
/// crash, trap, hang or leak: under `make fuzz` libFuzzer and the address
/// sanitizer look for exactly that, and the test suite replays every input
/// kept in `fuzz/corpus/<name>/` through the same functions.
package enum FuzzHarness: String, CaseIterable, Sendable {
    /// Any CBOR item (libcbor behind the pre-scan).
    case cbor
    /// Authenticator data, then the rest of an assertion's stateless checks.
    case authenticatorData = "authenticator-data"
    /// A COSE_Key, made an OpenSSL key and used once.
    case coseKey = "cose-key"
    /// clientDataJSON of an assertion.
    case clientData = "client-data"
    /// An attestation object of a registration whose client data is right.
    case attestationObject = "attestation-object"
    /// A device's P-256 SubjectPublicKeyInfo (DER), made canonical and used once.
    case derPublicKey = "der-public-key"
    /// An HTTP request head: the target and header checks of `RequestHead`.
    case httpHead = "http-head"
    /// A JSON request body, decoded as each request model the API reads.
    case jsonBody = "json-body"
    /// JOSE's JSON (a token's header or claims, a DPoP proof's `jwk`): its own strict reader, which must take
    /// exactly what Foundation's JSONDecoder takes (less an object naming a member twice), and agree on the value.
    case joseJSON = "jose-json"

    /// Runs the harness on `bytes`.
    package func run(_ bytes: [UInt8]) {
        switch self {
        case .cbor:
            _ = try? CBOR.decode(bytes)
            _ = try? CBOR.decodePrefix(bytes[...])
        case .authenticatorData:
            _ = try? AuthenticatorData(bytes)
            _ = try? WebAuthnVerifier.parseAssertion(
                clientDataJSON: Self.assertionClientData, authenticatorData: bytes, signature: [0x30],
                rp: Self.relyingParty, requireUserVerification: false)
        case .coseKey:
            if let key = try? CredentialPublicKey(cose: bytes) { _ = key.verify(signature: bytes, data: bytes) }
        case .clientData:
            _ = try? WebAuthnVerifier.parseAssertion(
                clientDataJSON: bytes, authenticatorData: Self.plainAuthenticatorData, signature: [0x30],
                rp: Self.relyingParty, requireUserVerification: false)
        case .attestationObject:
            _ = try? WebAuthnVerifier.verifyRegistration(
                clientDataJSON: Self.registrationClientData, attestationObject: bytes,
                expectedChallenge: Self.challenge, rp: Self.relyingParty, requireUserVerification: false)
        case .derPublicKey:
            if let key = try? ECDSAPublicKey(subjectPublicKeyInfo: bytes) {
                _ = key.isValidSignature(bytes, for: key.canonicalSubjectPublicKeyInfo)
                _ = try? ECDSAPublicKey(subjectPublicKeyInfo: key.canonicalSubjectPublicKeyInfo)
            }
        case .httpHead:
            Self.checkHead(bytes)
        case .jsonBody:
            Self.decodeBodies(bytes)
        case .joseJSON:
            Self.compareJOSEReader(bytes)
        }
    }

    // MARK: Fixed context

    static let relyingParty = RelyingParty(
        id: "example.org", name: "Example", origins: ["https://example.org"], allowsAnyLocalhostPort: true)
    static let challenge = [UInt8](repeating: 7, count: 32)
    static let plainAuthenticatorData = SHA256.hash(Array("example.org".utf8)) + [0x05, 0, 0, 0, 1]
    static let assertionClientData = clientData(type: "webauthn.get")
    static let registrationClientData = clientData(type: "webauthn.create")

    static func clientData(type: String) -> [UInt8] {
        let challenge = Data(Self.challenge).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(
                of: "=", with: "")
        return Array(#"{"type":"\#(type)","challenge":"\#(challenge)","origin":"https://example.org"}"#.utf8)
    }

    // MARK: HTTP

    /// Splits a head into its request line and fields the way an HTTP/1.1
    /// reader does (CRLF or LF lines, name before the first colon) and checks both.
    static func checkHead(_ bytes: [UInt8]) {
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            line.last == UInt8(ascii: "\r") ? line.dropLast() : line
        }
        guard !lines.isEmpty else { return }
        let requestLine = lines.removeFirst()
        let parts = requestLine.split(separator: UInt8(ascii: " "), maxSplits: 2, omittingEmptySubsequences: false)
        if parts.count >= 2 { _ = RequestHead.checkTarget(parts[1]) }
        let version = parts.count == 3 ? String(decoding: parts[2], as: UTF8.self) : ""
        var fields: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            fields.append(
                (
                    String(decoding: line[line.startIndex..<colon], as: UTF8.self),
                    String(decoding: line[line.index(after: colon)...], as: UTF8.self)
                ))
        }
        _ = RequestHead.checkFields(fields, version: version)
    }

    // MARK: JSON

    /// JOSE's reader against JSONDecoder on the same bytes: a text one takes and the other refuses, or a different
    /// value, traps (so libFuzzer reports it, and the corpus replay fails).
    static func compareJOSEReader(_ bytes: [UInt8]) {
        let ours = try? JSONValue.parseObject(bytes)
        let foundation =
            (try? JSONDecoder().decode([String: JSONValue].self, from: Data(bytes)))
            .flatMap { DuplicateMembers.found(in: bytes) ? nil : $0 }
        precondition(
            ours.map(normalised) == foundation.map(normalised),
            "JOSE's JSON reader and JSONDecoder disagree on \(bytes.count) bytes")
    }

    /// The members with every number as a Double: `1.5e9` is a whole number to JSONDecoder and a fraction's notation
    /// to the reader, and JSONValue's accessors read either alike.
    static func normalised(_ members: [String: JSONValue]) -> [String: JSONValue] {
        func value(_ v: JSONValue) -> JSONValue {
            switch v {
            case .integer(let i): .number(Double(i))
            case .array(let items): .array(items.map(value))
            case .object(let m): .object(normalised(m))
            default: v
            }
        }
        return members.mapValues(value)
    }

    /// Decodes `bytes` as every request body the API reads, through the same
    /// path as the server (`Request.decode`, with its 422 field finder).
    static func decodeBodies(_ bytes: [UInt8]) {
        let request = Request(
            id: "fuzz", method: "POST", path: "/", headers: ["content-type": "application/json"], body: bytes)
        _ = try? request.decode(CreateAccountRequest.self)
        _ = try? request.decode(CreateSessionRequest.self)
        _ = try? request.decode(StartEnrollmentRequest.self)
        _ = try? request.decode(FinishEnrollmentRequest.self)
        _ = try? request.decode(MFASignInRequest.self)
        _ = try? request.decode(PasskeySignInRequest.self)
        _ = try? request.decode(CreateAuthorizationRequest.self)
        _ = try? request.decode(StartVerificationRequest.self)
        _ = try? request.decode(ApprovalDecision.self)
    }
}
