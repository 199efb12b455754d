import Crypto
import Foundation
import HTTP

/// What makes two requests with one `Idempotency-Key` the same request: the
/// route's path parameters and its body, a JSON body compared as a value
/// (key order and spacing do not count).
///
/// The work is bounded, and no larger than the route's own decoding: a
/// keyed body holds at most `maxBodyBytes` and `maxMembers` JSON members
/// and elements (every keyed operation's request is far smaller; one byte
/// scan counts them), and the JSON is read by `JSONDecoder` and written in
/// a length-prefixed form of its own. Sorting keys through
/// `JSONSerialization` used to cost 170 ms for a 64 KiB body of 5,000
/// members, before any rate limit (0.7 ms for ten members);
/// `bench/probes.py` measures a keyed request against the same request
/// without a key.
extension Idempotency {
    /// The largest body a request with an `Idempotency-Key` may carry. The
    /// largest keyed request, a bound authorization's action (20 fields of
    /// 200 characters), is under 6 KiB.
    static let maxBodyBytes = 16 * 1024
    /// The most JSON members and array elements a keyed body may hold (a
    /// bound authorization has about 25, a phone verification about 20).
    static let maxMembers = 128
    /// The deepest nesting of objects and arrays a keyed body may hold (no
    /// keyed operation nests deeper than 3). Each level costs the canonical
    /// form its refused type guesses again, so depth must be bounded too:
    /// 500 nested arrays in 1 KiB cost 1.7 s.
    static let maxDepth = 8

    /// The hash that tells a repeat from another request under the same key.
    /// - Throws: `IdempotencyFailure.bodyTooLarge` for a body over `maxBodyBytes` or `maxMembers`.
    static func fingerprint(_ request: Request) throws(IdempotencyFailure) -> String {
        guard request.body.count <= maxBodyBytes else { throw .bodyTooLarge }
        let shape = shape(request.body)
        guard shape.members <= maxMembers, shape.depth <= maxDepth else { throw .bodyTooLarge }
        // The route's path parameters, not the path: both spellings of one route are one operation.
        let parameters = request.parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(
            separator: "&")
        return SHA256.hex(Array(parameters.utf8) + [0x0A] + canonical(request.body))
    }

    /// The size of a JSON text, counted outside strings in one pass (a
    /// count, not a parse: what is not JSON is hashed as it is anyway):
    /// `members`, its `:`, `,`, `[` and `{` (at least its members, elements
    /// and containers), and `depth`, its deepest nesting of `[` and `{`.
    static func shape(_ body: [UInt8]) -> (members: Int, depth: Int) {
        var members = 0
        var depth = 0
        var deepest = 0
        var inString = false
        var escaped = false
        for byte in body {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: ":"), UInt8(ascii: ","): members += 1
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                members += 1
                depth += 1
                deepest = max(deepest, depth)
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
        }
        return (members, deepest)
    }

    /// A JSON body as a canonical byte string (object keys sorted), or the
    /// body as it is when it is not JSON. Distinct JSON values give distinct
    /// strings: each string is length-prefixed and each value tagged.
    static func canonical(_ body: [UInt8]) -> [UInt8] {
        guard let value = try? JSONDecoder().decode(CanonicalJSON.self, from: Data(body)) else { return body }
        var out: [UInt8] = [0x00]  // never the first byte of a body that is not JSON, so the two kinds cannot collide
        value.write(to: &out)
        return out
    }
}

/// A JSON value read for `Idempotency.canonical`. Numbers are read as
/// 64-bit integers when they are integers, otherwise as doubles.
private indirect enum CanonicalJSON: Decodable {
    case object([(key: String, value: CanonicalJSON)])
    case array([CanonicalJSON])
    case string(String)
    case integer(Int64)
    case number(Double)
    case bool(Bool)
    case null

    private struct Key: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Scalars are tried first, strings before numbers: each refused guess
    /// costs a `DecodingError`, and most values are strings.
    init(from decoder: any Decoder) throws {
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let text = try? single.decode(String.self) {
            self = .string(text)
        } else if let integer = try? single.decode(Int64.self) {
            self = .integer(integer)
        } else if let number = try? single.decode(Double.self) {
            self = .number(number)
        } else if let bool = try? single.decode(Bool.self) {
            self = .bool(bool)
        } else if let object = try? decoder.container(keyedBy: Key.self) {
            self = .object(
                try object.allKeys.map { ($0.stringValue, try object.decode(CanonicalJSON.self, forKey: $0)) }
                    .sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) })
        } else {
            var array = try decoder.unkeyedContainer()
            var items: [CanonicalJSON] = []
            while !array.isAtEnd { items.append(try array.decode(CanonicalJSON.self)) }
            self = .array(items)
        }
    }

    func write(to out: inout [UInt8]) {
        func text(_ tag: UInt8, _ s: String) {
            out.append(tag)
            out.append(contentsOf: Array(String(s.utf8.count).utf8))
            out.append(UInt8(ascii: ":"))
            out.append(contentsOf: s.utf8)
        }
        switch self {
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for member in members {
                text(UInt8(ascii: "k"), member.key)
                member.value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for item in items { item.write(to: &out) }
            out.append(UInt8(ascii: "]"))
        case .string(let s): text(UInt8(ascii: "s"), s)
        case .integer(let i): text(UInt8(ascii: "i"), String(i))
        case .number(let d): text(UInt8(ascii: "d"), String(d))
        case .bool(let b): out.append(b ? UInt8(ascii: "t") : UInt8(ascii: "f"))
        case .null: out.append(UInt8(ascii: "n"))
        }
    }
}
