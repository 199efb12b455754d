internal import CSodium

/// Lower-case hexadecimal, through libsodium (`sodium_bin2hex`,
/// `sodium_hex2bin`; both run in time independent of the bytes).
public enum Hex {
    /// Encodes bytes as lower-case hex.
    public static func encode(_ bytes: [UInt8]) -> String {
        _ = Sodium.ready
        var out = [CChar](repeating: 0, count: bytes.count * 2 + 1)
        bytes.withUnsafeBufferPointer { input in
            _ = sodium_bin2hex(&out, out.count, input.baseAddress, input.count)
        }
        return String(decoding: out.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Decodes hex (either case); nil when it is not hex of whole bytes.
    public static func decode(_ text: String) -> [UInt8]? {
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
