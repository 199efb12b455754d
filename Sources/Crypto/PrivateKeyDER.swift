internal import COpenSSL

/// Private keys in and out of DER, shared by the signing keys: PKCS#8
/// PrivateKeyInfo (RFC 5208) out, PKCS#8 or the older type-specific forms
/// (SEC1, PKCS#1) in. The bytes only ever live in `SecureBytes` on our side.
enum PrivateKeyDER {
    /// `key` as PKCS#8 PrivateKeyInfo DER. `i2d_PrivateKey` would write the
    /// type-specific form (SEC1 for EC) instead, so the key goes through
    /// `EVP_PKEY2PKCS8`, whose structure OpenSSL cleanses when it is freed.
    /// - Throws: `OpenSSLError` naming the call that failed.
    static func pkcs8(_ key: OpaquePointer) throws(OpenSSLError) -> SecureBytes {
        OpenSSLError.clear()
        guard let info = EVP_PKEY2PKCS8(key) else { throw .last("EVP_PKEY2PKCS8") }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        let length = i2d_PKCS8_PRIV_KEY_INFO(info, nil)
        guard length > 0 else { throw .last("i2d_PKCS8_PRIV_KEY_INFO") }
        var failed = false
        let out = SecureBytes(count: Int(length)) { buffer in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
            failed = i2d_PKCS8_PRIV_KEY_INFO(info, &cursor) != length
        }
        if failed { throw .last("i2d_PKCS8_PRIV_KEY_INFO") }
        return out
    }

    /// The private key in `der` (PKCS#8, SEC1 or PKCS#1), which must end with
    /// the key; the caller owns (and frees) the returned `EVP_PKEY`.
    /// - Throws: `OpenSSLError` when the bytes are not one private key.
    static func parse(_ der: SecureBytes) throws(OpenSSLError) -> OpaquePointer {
        OpenSSLError.clear()
        var consumed = 0
        let parsed: OpaquePointer? = der.withUnsafeBytes { raw in
            guard let start = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
            var cursor: UnsafePointer<UInt8>? = start
            let key = d2i_AutoPrivateKey(nil, &cursor, raw.count)
            if let cursor { consumed = cursor - start }
            return key
        }
        guard let parsed else { throw .last("d2i_AutoPrivateKey") }
        guard consumed == der.count else {
            EVP_PKEY_free(parsed)
            throw OpenSSLError(operation: "d2i_AutoPrivateKey (bytes after the key)", code: 0)
        }
        return parsed
    }

    /// A big-number parameter of `key` (`"n"`, `"e"`, `"qx"`, …) as big-endian
    /// bytes: left-padded to `width` when given (EC coordinates are fixed
    /// size), else the fewest bytes that hold it (RSA's modulus and exponent).
    static func parameter(_ key: OpaquePointer, _ name: String, width: Int? = nil) -> [UInt8]? {
        var number: OpaquePointer? = nil
        guard EVP_PKEY_get_bn_param(key, name, &number) == 1, let number else {
            OpenSSLError.clear()
            return nil
        }
        defer { BN_free(number) }
        let size = width ?? max(1, (Int(BN_num_bits(number)) + 7) / 8)
        var bytes = [UInt8](repeating: 0, count: size)
        return BN_bn2binpad(number, &bytes, Int32(size)) == Int32(size) ? bytes : nil
    }
}
