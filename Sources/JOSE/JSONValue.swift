import Foundation

/// A JSON value as JOSE headers, JWKs and JWT claims hold them: typed and
/// `Sendable`, where `JSONSerialization`'s `Any` is neither. Integers stay
/// integers (`exp`, `iat` are written without a fraction); booleans are
/// never numbers.
package enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The string, or nil for another kind.
    package var string: String? { if case .string(let value) = self { value } else { nil } }

    /// The integer (a whole `number` counts), or nil for another kind.
    package var integer: Int64? {
        switch self {
        case .integer(let value): value
        case .number(let value) where value.rounded(.down) == value && abs(value) < 9e15: Int64(value)
        default: nil
        }
    }

    /// The value as a NumericDate's seconds (RFC 7519 §2: fractions allowed,
    /// dropped here), or nil when it is no number.
    var seconds: Int64? {
        switch self {
        case .integer(let value): value
        case .number(let value) where value.isFinite && abs(value) < 9e15: Int64(value.rounded(.down))
        default: nil
        }
    }

    /// The strings of an array of strings, or nil for anything else.
    package var strings: [String]? {
        guard case .array(let values) = self else { return nil }
        let strings = values.compactMap(\.string)
        return strings.count == values.count ? strings : nil
    }

    /// The members of an object, or nil for another kind.
    package var object: [String: JSONValue]? { if case .object(let value) = self { value } else { nil } }

    /// Parses one JSON object (a header, a JWK, a claims set), strictly (see `JSONReader`).
    /// - Throws: `JOSEError.malformed` for anything else, and for an object
    ///   that names a member twice (see `DuplicateMembers`).
    package static func parseObject(_ bytes: [UInt8]) throws(JOSEError) -> [String: JSONValue] {
        guard let object = try? JSONReader.object(bytes) else { throw .malformed }
        return object
    }

    /// `object` as compact JSON with sorted keys and unescaped slashes: one
    /// object, one byte string, so a token or key set is reproducible.
    ///
    /// Written here rather than by `JSONEncoder`: a token grant serializes a
    /// header, claims and its answer, and the encoder's boxing of each value
    /// was a measurable share of a grant's time. RFC 8259 §7 escaping: `"`,
    /// `\\` and the control characters; everything else as UTF-8. A non-finite
    /// number, which JSON cannot hold, is written as null.
    package static func serialize(_ object: [String: JSONValue]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        JSONValue.object(object).write(to: &out)
        return out
    }

    /// This value alone as compact JSON, written as `serialize(_:)` writes it.
    package var serialized: [UInt8] {
        var out: [UInt8] = []
        write(to: &out)
        return out
    }

    private func write(to out: inout [UInt8]) {
        switch self {
        case .null: out += "null".utf8
        case .bool(let value): out += (value ? "true" : "false").utf8
        case .integer(let value): out += String(value).utf8
        case .number(let value):
            if !value.isFinite {
                out += "null".utf8
            } else {
                // As the encoder writes a Double: its description, a whole number without ".0".
                var text = value.description
                if text.hasSuffix(".0") { text.removeLast(2) }
                out += text.utf8
            }
        case .string(let value): Self.write(value, to: &out)
        case .array(let values):
            out.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                value.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.write(key, to: &out)
                out.append(UInt8(ascii: ":"))
                members[key]!.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func write(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += #"\""#.utf8
            case UInt8(ascii: "\\"): out += #"\\"#.utf8
            case 0x0A: out += #"\n"#.utf8
            case 0x0D: out += #"\r"#.utf8
            case 0x09: out += #"\t"#.utf8
            case 0x08: out += #"\b"#.utf8
            case 0x0C: out += #"\f"#.utf8
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += #"\u00"#.utf8
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension JSONValue: Codable {
    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // Bool before numbers and Int64 before Double: JSONDecoder reads a
        // bool only from true/false and an Int64 only from a whole number.
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value) where value.isFinite: try container.encode(value)
        case .number: try container.encodeNil()
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    package init(stringLiteral value: String) { self = .string(value) }
    package init(integerLiteral value: Int64) { self = .integer(value) }
    package init(booleanLiteral value: Bool) { self = .bool(value) }
    package init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    package init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
