/// A strict RFC 8259 reader into `JSONValue`, for the JSON of JOSE (headers, JWKs, claims): every DPoP proof and
/// access token brings two or three such objects, and `JSONDecoder`, trying each value as a Bool, an Int64, a
/// Double, a String, an array and an object in turn through `Codable`, was a tenth of the server's CPU under those
/// loads.
///
/// What it takes is what `JSONDecoder` took: one JSON text, whitespace around tokens, the seven escapes and
/// `\u` escapes with surrogate pairs, valid UTF-8, numbers as the grammar writes them (a whole number that fits
/// an `Int64` is an `.integer`, any other an `.number`, a number too large for a `Double` refused), at most 512
/// levels of nesting. It also refuses an object that names a member twice (see `DuplicateMembers`: the names
/// compared after their escapes are decoded), which `JSONDecoder` left to a second pass.
struct JSONReader {
    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0
    private static let maximumDepth = 512

    /// Why a text was refused; never shown (callers answer `.malformed`).
    struct Refused: Error {}

    /// Reads `bytes` as one JSON object.
    /// - Throws: `Refused` for anything else.
    static func object(_ bytes: [UInt8]) throws(Refused) -> [String: JSONValue] {
        var reader = JSONReader(bytes: bytes)
        reader.skipWhitespace()
        guard reader.peek == UInt8(ascii: "{") else { throw Refused() }
        guard case .object(let members) = try reader.value() else { throw Refused() }
        reader.skipWhitespace()
        guard reader.index == bytes.count else { throw Refused() }
        return members
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func expect(_ literal: StaticString) throws(Refused) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw Refused() }
        for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] { throw Refused() }
        index += count
    }

    private mutating func value() throws(Refused) -> JSONValue {
        skipWhitespace()
        guard let byte = peek else { throw Refused() }
        switch byte {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"):
            try expect("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expect("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expect("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw Refused()
        }
    }

    private mutating func object() throws(Refused) -> JSONValue {
        depth += 1
        guard depth <= Self.maximumDepth else { throw Refused() }
        index += 1  // {
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if peek == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard peek == UInt8(ascii: "\"") else { throw Refused() }
            let name = try string()
            skipWhitespace()
            guard peek == UInt8(ascii: ":") else { throw Refused() }
            index += 1
            let member = try value()
            // A name given twice: refused, as RFC 7515 §5.2 allows (see DuplicateMembers).
            guard members.updateValue(member, forKey: name) == nil else { throw Refused() }
            skipWhitespace()
            switch peek {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                depth -= 1
                return .object(members)
            default: throw Refused()
            }
        }
    }

    private mutating func array() throws(Refused) -> JSONValue {
        depth += 1
        guard depth <= Self.maximumDepth else { throw Refused() }
        index += 1  // [
        var items: [JSONValue] = []
        skipWhitespace()
        if peek == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(items)
        }
        while true {
            items.append(try value())
            skipWhitespace()
            switch peek {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                depth -= 1
                return .array(items)
            default: throw Refused()
            }
        }
    }

    /// A string from its opening quote; its bytes must be UTF-8, its control characters escaped.
    private mutating func string() throws(Refused) -> String {
        index += 1  // "
        let start = index
        // The common case, no escape: the bytes between the quotes as they are.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                defer { index += 1 }
                return try Self.text(bytes[start..<index])
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw Refused() }
            index += 1
        }
        var out = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""): return try Self.text(out[...])
            case UInt8(ascii: "\\"):
                guard let escape = peek else { throw Refused() }
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        // A high surrogate: its low half must follow as a second escape.
                        try expect("\\u")
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw Refused() }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw Refused() }  // a lone low surrogate
                    out.append(contentsOf: String(Character(unicode)).utf8)
                default: throw Refused()
                }
            default:
                guard byte >= 0x20 else { throw Refused() }
                out.append(byte)
            }
        }
        throw Refused()
    }

    private mutating func hex4() throws(Refused) -> UInt32 {
        guard index + 4 <= bytes.count else { throw Refused() }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw Refused()
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    /// UTF-8 bytes as a String; invalid UTF-8 is refused, never repaired.
    private static func text(_ utf8: ArraySlice<UInt8>) throws(Refused) -> String {
        guard let text = String(validating: utf8, as: UTF8.self) else { throw Refused() }
        return text
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private mutating func number() throws(Refused) -> JSONValue {
        let start = index
        var whole = true
        if peek == UInt8(ascii: "-") { index += 1 }
        func digits(_ reader: inout JSONReader) throws(Refused) {
            let first = reader.index
            while let byte = reader.peek, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { reader.index += 1 }
            guard reader.index > first else { throw Refused() }
        }
        if peek == UInt8(ascii: "0") {
            index += 1
        } else {
            try digits(&self)
        }
        if peek == UInt8(ascii: ".") {
            index += 1
            whole = false
            try digits(&self)
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            index += 1
            whole = false
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
            try digits(&self)
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if whole, let integer = Int64(text) { return .integer(integer) }
        guard let number = Double(text), number.isFinite else { throw Refused() }
        return .number(number)
    }
}
