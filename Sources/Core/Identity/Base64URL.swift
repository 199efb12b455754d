import Foundation

/// Base64url without padding (RFC 4648 §5), as used for tokens and WebAuthn.
/// Encoded straight from the bytes: every token, code and signature passes
/// through here, and Foundation's base64 plus three string replacements
/// (through NSString on Linux) cost more than the ES256 signature beside them.
package enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Encodes bytes without `=` padding.
    package static func encode(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var i = 0
        while i + 3 <= bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(alphabet[Int(n >> 6 & 63)])
            out.append(alphabet[Int(n & 63)])
            i += 3
        }
        switch bytes.count - i {
        case 1:
            let n = UInt32(bytes[i]) << 16
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
        case 2:
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(alphabet[Int(n >> 6 & 63)])
        default: break
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Each ASCII byte's 6-bit value in the base64url alphabet, 0xFF for any other byte.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }()

    /// Decodes unpadded or padded base64url; nil when the text is not base64url. Decoded from the bytes with a
    /// table: every token a request carries passes through here (Foundation's decoder after three replacements,
    /// through NSString on Linux, was a fifth of a DPoP-checked request's CPU).
    package static func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode(bytes: $0) }
    }

    /// `decode(_:)` over UTF-8 bytes.
    package static func decode(bytes input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var count = input.count
        // Padding, when sent, only at the end and at most two, completing a group of four.
        var padding = 0
        while count > 0 && input[count - 1] == UInt8(ascii: "=") {
            count -= 1
            padding += 1
        }
        guard padding <= 2, padding == 0 || (count + padding) % 4 == 0, count % 4 != 1 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for i in 0..<count {
            let value = values[Int(input[i])]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        return out
    }
}
