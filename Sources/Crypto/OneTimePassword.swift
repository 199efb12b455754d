/// HOTP (RFC 4226) and TOTP (RFC 6238) code generation. Verification
/// policy (the window, replay) lives with the factor that uses it.
package enum OneTimePassword {
    /// The HOTP value of `counter`: dynamic truncation of the HMAC, `digits` long, zero-padded.
    package static func hotp(secret: [UInt8], counter: UInt64, digits: Int, algorithm: HMAC.Algorithm) -> String {
        precondition((6...8).contains(digits), "one-time passwords have 6 to 8 digits")
        let message = (0..<8).map { UInt8(truncatingIfNeeded: counter >> (56 - 8 * $0)) }
        let mac = HMAC.authenticate(message, key: secret, algorithm: algorithm)
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let binary =
            (UInt32(mac[offset] & 0x7f) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8)
            | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let value = String(binary % modulus)
        return String(repeating: "0", count: digits - value.count) + value
    }

    /// The TOTP time step of a Unix time (seconds): floor(time / period).
    package static func step(unixTime: Double, period: Int) -> UInt64 {
        UInt64(max(0, (unixTime / Double(period)).rounded(.down)))
    }
}
