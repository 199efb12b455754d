internal import COpenSSL

/// A P-256 public key from a device (SubjectPublicKeyInfo, DER), verifying
/// ES256 signatures (ECDSA over SHA-256, DER-encoded) through OpenSSL.
/// Keys on other curves, and DER with bytes after the key, are refused.
/// One key has one `canonicalSubjectPublicKeyInfo`, however it was encoded
/// (compressed point, explicit curve parameters): store and compare that.
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
    /// The key as DER SubjectPublicKeyInfo with the named curve and the
    /// uncompressed point: the same bytes for the same key, always.
    public let canonicalSubjectPublicKeyInfo: [UInt8]

    /// SubjectPublicKeyInfo prefix of an uncompressed P-256 point (id-ecPublicKey, prime256v1, BIT STRING of 66 bytes).
    private static let p256Prefix: [UInt8] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01,
        0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
    ]

    /// Parses a DER SubjectPublicKeyInfo of a P-256 key.
    /// - Throws: `Failure` when it is not one, or bytes follow it.
    public init(subjectPublicKeyInfo der: [UInt8]) throws(Failure) {
        guard !der.isEmpty, der.count < 1024 else { throw .notSubjectPublicKeyInfo }
        var consumed = 0
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let key = d2i_PUBKEY(nil, &cursor, buffer.count)
            if let cursor, let start = buffer.baseAddress { consumed = cursor - start }
            return key
        }
        guard let parsed else { throw .notSubjectPublicKeyInfo }
        guard consumed == der.count else {
            EVP_PKEY_free(parsed)
            throw .notSubjectPublicKeyInfo
        }
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_base_id(parsed) == EVP_PKEY_EC,
              EVP_PKEY_get_group_name(parsed, &name, name.count, &length) == 1,
              String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self) == "prime256v1"
        else {
            EVP_PKEY_free(parsed)
            throw .notP256
        }
        guard let x = Self.coordinate(parsed, "qx"), let y = Self.coordinate(parsed, "qy") else {
            EVP_PKEY_free(parsed)
            throw .notP256
        }
        key = parsed
        canonicalSubjectPublicKeyInfo = Self.p256Prefix + [0x04] + x + y
    }

    /// One affine coordinate of the key's point, as 32 big-endian bytes.
    private static func coordinate(_ key: OpaquePointer, _ name: String) -> [UInt8]? {
        var number: OpaquePointer? = nil
        guard EVP_PKEY_get_bn_param(key, name, &number) == 1, let number else { return nil }
        defer { BN_free(number) }
        var bytes = [UInt8](repeating: 0, count: 32)
        return BN_bn2binpad(number, &bytes, 32) == 32 ? bytes : nil
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
