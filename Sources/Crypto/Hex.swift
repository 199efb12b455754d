internal import CSodium

/// Lower-case hexadecimal, through libsodium (`sodium_bin2hex`,
/// `sodium_hex2bin`; both run in time independent of the bytes).
package enum Hex {
    /// Encodes bytes as lower-case hex.
    package static func encode(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBufferPointer { encode($0) }
    }

    /// Encodes bytes as lower-case hex, written straight into the string's storage
    /// (one allocation: session tokens' hashes are encoded on the hot path).
    package static func encode(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { out in
            for (i, byte) in bytes.enumerated() {
                out[2 * i] = digits[Int(byte >> 4)]
                out[2 * i + 1] = digits[Int(byte & 0x0F)]
            }
            return bytes.count * 2
        }
    }

    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Decodes hex (either case); nil when it is not hex of whole bytes.
    package static func decode(_ text: String) -> [UInt8]? {
        _ = Sodium.ready
        let input = Array(text.utf8)
        guard input.count % 2 == 0 else { return nil }
        var out = [UInt8](repeating: 0, count: input.count / 2)
        var length = 0
        var end: UnsafePointer<CChar>? = nil
        let rc = input.withUnsafeBufferPointer { raw in
            raw.withMemoryRebound(to: CChar.self) { chars in
                sodium_hex2bin(&out, out.count, chars.baseAddress, chars.count, nil, &length, &end)
            }
        }
        guard rc == 0, length == out.count else { return nil }
        return out
    }
}
