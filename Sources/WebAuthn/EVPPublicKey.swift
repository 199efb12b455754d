internal import COpenSSL

/// An OpenSSL public key (EVP_PKEY) that verifies one signature scheme.
///
/// `@unchecked Sendable`: the EVP_PKEY is never mutated after `init`
/// (OpenSSL allows concurrent verification with one key) and is freed once,
/// in `deinit`.
final class EVPPublicKey: @unchecked Sendable {
    private let key: OpaquePointer
    private let algorithm: COSEAlgorithm

    /// Parses a DER SubjectPublicKeyInfo and checks that it is the kind of
    /// key `algorithm` needs (P-256, Ed25519 or RSA of 2048–8192 bits).
    init(subjectPublicKeyInfo der: [UInt8], for algorithm: COSEAlgorithm) throws(WebAuthnError) {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let parsed else {
            ERR_clear_error()
            throw WebAuthnError(.unsupportedKey, detail: "d2i_PUBKEY refused the key")
        }
        let acceptable: Bool
        switch algorithm {
        case .es256:
            var name = [CChar](repeating: 0, count: 64)
            var length = 0
            acceptable = EVP_PKEY_get_base_id(parsed) == EVP_PKEY_EC
                && EVP_PKEY_get_group_name(parsed, &name, name.count, &length) == 1
                && String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self) == "prime256v1"
        case .edDSA:
            acceptable = EVP_PKEY_get_base_id(parsed) == EVP_PKEY_ED25519
        case .rs256:
            let bits = EVP_PKEY_get_bits(parsed)
            acceptable = EVP_PKEY_get_base_id(parsed) == EVP_PKEY_RSA && bits >= 2048 && bits <= 8192
        }
        guard acceptable else {
            EVP_PKEY_free(parsed)
            ERR_clear_error()
            throw WebAuthnError(.unsupportedKey, detail: "key does not fit \(algorithm)")
        }
        key = parsed
        self.algorithm = algorithm
    }

    deinit { EVP_PKEY_free(key) }

    /// True when `signature` is a valid signature of `message` under this key.
    func verify(signature: [UInt8], message: [UInt8]) -> Bool {
        switch algorithm {
        case .es256: guard (8...72).contains(signature.count) else { return false }
        case .edDSA: guard signature.count == 64 else { return false }
        case .rs256: guard signature.count == Int(EVP_PKEY_get_size(key)) else { return false }
        }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer {
            EVP_MD_CTX_free(context)
            ERR_clear_error()
        }
        // Ed25519 is "pure": no separate digest.
        let digest = algorithm == .edDSA ? nil : EVP_sha256()
        guard EVP_DigestVerifyInit(context, nil, digest, nil, key) == 1 else { return false }
        return EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
    }
}
