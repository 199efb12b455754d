internal import COpenSSL

/// A P-256 public key from a device (SubjectPublicKeyInfo, DER), verifying
/// ES256 signatures (ECDSA over SHA-256, DER-encoded) through OpenSSL.
/// Keys on other curves are refused.
///
/// `@unchecked Sendable`: the EVP_PKEY is only read after `init` (OpenSSL
/// allows concurrent verification with one key) and freed in `deinit`.
public final class ECDSAPublicKey: @unchecked Sendable {
    /// Why a key was refused.
    public enum Failure: Error, Sendable, Equatable {
        case notSubjectPublicKeyInfo
        case notP256
    }

    private let key: OpaquePointer

    /// Parses a DER SubjectPublicKeyInfo of a P-256 key.
    /// - Throws: `Failure` when it is not one.
    public init(subjectPublicKeyInfo der: [UInt8]) throws(Failure) {
        guard !der.isEmpty, der.count < 1024 else { throw .notSubjectPublicKeyInfo }
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let parsed else { throw .notSubjectPublicKeyInfo }
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_base_id(parsed) == EVP_PKEY_EC,
              EVP_PKEY_get_group_name(parsed, &name, name.count, &length) == 1,
              String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self) == "prime256v1"
        else {
            EVP_PKEY_free(parsed)
            throw .notP256
        }
        key = parsed
    }

    deinit { EVP_PKEY_free(key) }

    /// True when `signature` (DER ECDSA) signs SHA-256(`message`) under this key.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        guard !signature.isEmpty, signature.count <= 80, let ctx = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestVerifyInit(ctx, nil, EVP_sha256(), nil, key) == 1 else { return false }
        return EVP_DigestVerify(ctx, signature, signature.count, message, message.count) == 1
    }
}
