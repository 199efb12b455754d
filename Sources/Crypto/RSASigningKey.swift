internal import COpenSSL

/// An RSA private key from PEM that signs RS256 (PKCS #1 v1.5 with SHA-256):
/// the key of a Vonage application, which signs the JWT of each Voice API call.
///
/// `@unchecked Sendable`: the `EVP_PKEY` is never mutated after `init`, and
/// OpenSSL allows concurrent signing with one key.
package final class RSASigningKey: @unchecked Sendable {
    private let key: OpaquePointer

    deinit { EVP_PKEY_free(key) }

    /// The key in `pem` (PKCS #8 or PKCS #1).
    /// - Throws: `OpenSSLError` when it is not an RSA private key of 2048 bits or more.
    package init(pem: String) throws(OpenSSLError) {
        OpenSSLError.clear()
        let bytes = Array(pem.utf8)
        let bio = bytes.withUnsafeBufferPointer { BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }
        guard let bio else { throw .last("BIO_new_mem_buf") }
        defer { BIO_free(bio) }
        guard let parsed = PEM_read_bio_PrivateKey(bio, nil, nil, nil) else { throw .last("PEM_read_bio_PrivateKey") }
        guard EVP_PKEY_is_a(parsed, "RSA") == 1, EVP_PKEY_get_bits(parsed) >= 2048 else {
            EVP_PKEY_free(parsed)
            throw OpenSSLError(operation: "PEM_read_bio_PrivateKey (not an RSA key of 2048 bits or more)", code: 0)
        }
        key = parsed
    }

    /// An RS256 signature over `message`.
    /// - Throws: `OpenSSLError` naming the call that failed.
    package func signature(for message: [UInt8]) throws(OpenSSLError) -> [UInt8] {
        try DigestSign.sha256(message, key: key)
    }
}

/// `EVP_DigestSign` with SHA-256: ES256 (DER) for an EC key, RS256 for an RSA key.
enum DigestSign {
    static func sha256(_ message: [UInt8], key: OpaquePointer) throws(OpenSSLError) -> [UInt8] {
        OpenSSLError.clear()
        guard let context = EVP_MD_CTX_new() else { throw .last("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1 else { throw .last("EVP_DigestSignInit") }
        var length = 0
        guard EVP_DigestSign(context, nil, &length, message, message.count) == 1 else { throw .last("EVP_DigestSign") }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, message, message.count) == 1 else {
            throw .last("EVP_DigestSign")
        }
        return Array(signature.prefix(length))
    }
}
