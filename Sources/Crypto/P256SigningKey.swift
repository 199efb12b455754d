internal import COpenSSL

/// A P-256 private key in OpenSSL that signs ES256 (ECDSA with SHA-256, DER
/// signatures): a device key kept in software, where no secure element
/// exists (a Linux machine), or a token-signing key of Trifactor's own. Its
/// private half leaves only as PKCS#8 DER in `SecureBytes`, to be sealed by
/// the caller.
///
/// `@unchecked Sendable`: the `EVP_PKEY` is never mutated after `init`, and
/// OpenSSL allows concurrent signing with one key.
package final class P256SigningKey: @unchecked Sendable {
    private let key: OpaquePointer

    private init(key: OpaquePointer) { self.key = key }

    deinit { EVP_PKEY_free(key) }

    /// A new key from OpenSSL's CSPRNG.
    /// - Throws: `OpenSSLError` naming the call that failed.
    package static func generate() throws(OpenSSLError) -> P256SigningKey {
        OpenSSLError.clear()
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw .last("EVP_PKEY_CTX_new_from_name")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { throw .last("EVP_PKEY_keygen_init") }
        guard EVP_PKEY_CTX_set_group_name(context, "prime256v1") == 1 else {
            throw .last("EVP_PKEY_CTX_set_group_name")
        }
        var key: OpaquePointer?
        guard EVP_PKEY_generate(context, &key) == 1, let key else { throw .last("EVP_PKEY_generate") }
        return P256SigningKey(key: key)
    }

    /// The key stored by `pkcs8`, or by earlier versions, which wrote the
    /// SEC1 form (RFC 5915): software device keys sealed then still open.
    /// - Throws: `OpenSSLError` when the bytes are not a P-256 private key.
    package convenience init(pkcs8 der: SecureBytes) throws(OpenSSLError) {
        let parsed = try PrivateKeyDER.parse(der)
        guard EVP_PKEY_is_a(parsed, "EC") == 1, EVP_PKEY_get_bits(parsed) == 256 else {
            EVP_PKEY_free(parsed)
            throw OpenSSLError(operation: "d2i_AutoPrivateKey (not a P-256 key)", code: 0)
        }
        self.init(key: parsed)
    }

    /// The private key as PKCS#8 PrivateKeyInfo DER (RFC 5208), in wiped memory.
    /// - Throws: `OpenSSLError` when OpenSSL cannot encode it.
    package func pkcs8() throws(OpenSSLError) -> SecureBytes {
        try PrivateKeyDER.pkcs8(key)
    }

    /// The public point's affine coordinates, 32 big-endian bytes each: the
    /// `x` and `y` of its JWK (RFC 7518 §6.2.1.2 wants them full size).
    /// - Throws: `OpenSSLError` when OpenSSL cannot export them.
    package func publicCoordinates() throws(OpenSSLError) -> (x: [UInt8], y: [UInt8]) {
        guard let x = PrivateKeyDER.parameter(key, "qx", width: 32),
            let y = PrivateKeyDER.parameter(key, "qy", width: 32)
        else { throw OpenSSLError(operation: "EVP_PKEY_get_bn_param(qx, qy)", code: 0) }
        return (x, y)
    }

    /// The public key as SubjectPublicKeyInfo DER, as Trifactor enrolls it.
    package var subjectPublicKeyInfo: [UInt8] {
        let length = i2d_PUBKEY(key, nil)
        guard length > 0 else { return [] }
        var out = [UInt8](repeating: 0, count: Int(length))
        out.withUnsafeMutableBufferPointer { buffer in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            _ = i2d_PUBKEY(key, &cursor)
        }
        return out
    }

    /// An ES256 signature (DER) over `message`.
    /// - Throws: `OpenSSLError` naming the call that failed.
    package func signature(for message: [UInt8]) throws(OpenSSLError) -> [UInt8] {
        try DigestSign.sha256(message, key: key)
    }
}
