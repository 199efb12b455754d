internal import COpenSSL

/// An RSA private key of 2048 bits or more that signs RS256 (PKCS #1 v1.5
/// with SHA-256): the key of a Vonage application (from PEM), which signs the
/// JWT of each Voice API call, or a token-signing key Trifactor makes itself
/// and keeps as PKCS#8 in `SecureBytes`, sealed by the caller.
///
/// `@unchecked Sendable`: the `EVP_PKEY` is never mutated after `init`, and
/// OpenSSL allows concurrent signing with one key.
package final class RSASigningKey: @unchecked Sendable {
    private let key: OpaquePointer

    private init(key: OpaquePointer) { self.key = key }

    deinit { EVP_PKEY_free(key) }

    /// The key in `pem` (PKCS #8 or PKCS #1).
    /// - Throws: `OpenSSLError` when it is not an RSA private key of 2048 bits or more.
    package convenience init(pem: String) throws(OpenSSLError) {
        OpenSSLError.clear()
        guard let bio = MemoryBIO.holding(pem) else { throw .last("BIO_new") }
        defer { BIO_free(bio) }
        guard let parsed = PEM_read_bio_PrivateKey(bio, nil, nil, nil) else { throw .last("PEM_read_bio_PrivateKey") }
        try self.init(checking: parsed, operation: "PEM_read_bio_PrivateKey")
    }

    /// The key stored by `pkcs8` (PKCS#1 DER is read too).
    /// - Throws: `OpenSSLError` when the bytes are not an RSA private key of 2048 bits or more.
    package convenience init(pkcs8 der: SecureBytes) throws(OpenSSLError) {
        try self.init(checking: try PrivateKeyDER.parse(der), operation: "d2i_AutoPrivateKey")
    }

    /// Takes `parsed` if it is RSA of 2048 bits or more, else frees it.
    private convenience init(checking parsed: OpaquePointer, operation: String) throws(OpenSSLError) {
        guard EVP_PKEY_is_a(parsed, "RSA") == 1, EVP_PKEY_get_bits(parsed) >= 2048 else {
            EVP_PKEY_free(parsed)
            throw OpenSSLError(operation: "\(operation) (not an RSA key of 2048 bits or more)", code: 0)
        }
        self.init(key: parsed)
    }

    /// A new key of `bits` bits (2048 to 8192, the sizes `PublicKey` verifies)
    /// with exponent 65537, from OpenSSL's CSPRNG.
    /// - Throws: `OpenSSLError` for another size, or naming the call that failed.
    package static func generate(bits: Int = 2048) throws(OpenSSLError) -> RSASigningKey {
        guard (2048...8192).contains(bits) else {
            throw OpenSSLError(operation: "RSA key generation (\(bits) bits is outside 2048...8192)", code: 0)
        }
        OpenSSLError.clear()
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else {
            throw .last("EVP_PKEY_CTX_new_from_name")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { throw .last("EVP_PKEY_keygen_init") }
        guard EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(bits)) == 1 else {
            throw .last("EVP_PKEY_CTX_set_rsa_keygen_bits")
        }
        var key: OpaquePointer?
        guard EVP_PKEY_generate(context, &key) == 1, let key else { throw .last("EVP_PKEY_generate") }
        return RSASigningKey(key: key)
    }

    /// The private key as PKCS#8 PrivateKeyInfo DER (RFC 5208), in wiped memory.
    /// - Throws: `OpenSSLError` when OpenSSL cannot encode it.
    package func pkcs8() throws(OpenSSLError) -> SecureBytes {
        try PrivateKeyDER.pkcs8(key)
    }

    /// The public modulus and exponent, big-endian without leading zeros:
    /// the `n` and `e` of its JWK (RFC 7518 §6.3.1).
    /// - Throws: `OpenSSLError` when OpenSSL cannot export them.
    package func publicComponents() throws(OpenSSLError) -> (modulus: [UInt8], exponent: [UInt8]) {
        guard let modulus = PrivateKeyDER.parameter(key, "n"), let exponent = PrivateKeyDER.parameter(key, "e") else {
            throw OpenSSLError(operation: "EVP_PKEY_get_bn_param(n, e)", code: 0)
        }
        return (modulus, exponent)
    }

    /// An RS256 signature over `message`.
    /// - Throws: `OpenSSLError` naming the call that failed.
    package func signature(for message: [UInt8]) throws(OpenSSLError) -> [UInt8] {
        try DigestSign.sha256(message, key: key)
    }

    /// A PS256 signature over `message` (RSASSA-PSS, SHA-256, MGF1 with
    /// SHA-256, a 32-byte salt: RFC 7518 §3.5), for tests of verifiers:
    /// Trifactor's own tokens are RS256.
    /// - Throws: `OpenSSLError` naming the call that failed.
    package func pssSignature(for message: [UInt8]) throws(OpenSSLError) -> [UInt8] {
        try DigestSign.sha256(message, key: key, pss: true)
    }
}

/// `EVP_DigestSign` with SHA-256: ES256 (DER) for an EC key, RS256 (or PS256 with `pss`) for an RSA key.
enum DigestSign {
    static func sha256(_ message: [UInt8], key: OpaquePointer, pss: Bool = false) throws(OpenSSLError) -> [UInt8] {
        OpenSSLError.clear()
        guard let context = EVP_MD_CTX_new() else { throw .last("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        // The context belongs to `context` and is freed with it.
        var pkeyContext: OpaquePointer? = nil
        guard EVP_DigestSignInit(context, &pkeyContext, EVP_sha256(), nil, key) == 1 else {
            throw .last("EVP_DigestSignInit")
        }
        if pss {
            guard EVP_PKEY_CTX_set_rsa_padding(pkeyContext, RSA_PKCS1_PSS_PADDING) == 1 else {
                throw .last("EVP_PKEY_CTX_set_rsa_padding")
            }
            guard EVP_PKEY_CTX_set_rsa_pss_saltlen(pkeyContext, RSA_PSS_SALTLEN_DIGEST) == 1 else {
                throw .last("EVP_PKEY_CTX_set_rsa_pss_saltlen")
            }
        }
        var length = 0
        guard EVP_DigestSign(context, nil, &length, message, message.count) == 1 else { throw .last("EVP_DigestSign") }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, message, message.count) == 1 else {
            throw .last("EVP_DigestSign")
        }
        return Array(signature.prefix(length))
    }
}
