internal import COpenSSL
internal import COpenSSLShim

/// A public key in OpenSSL (one `EVP_PKEY`) of a kind Trifactor verifies
/// signatures with: P-256 (ES256: DER ECDSA over SHA-256), Ed25519 (pure
/// EdDSA) or RSA of 2048 to 8192 bits (RS256: PKCS #1 v1.5 with SHA-256;
/// PS256: PSS with SHA-256).
/// Built from DER or from raw parameters through OpenSSL itself, never from
/// hand-assembled DER.
///
/// `@unchecked Sendable`: the EVP_PKEY is never mutated after `init`
/// (OpenSSL allows concurrent verification with one key) and is freed once,
/// in `deinit`.
package final class PublicKey: @unchecked Sendable {
    /// What kind of key it is.
    package enum Kind: Sendable, Equatable {
        case p256, ed25519
        case rsa(bits: Int)
    }

    /// Why a key was refused.
    package enum Failure: Error, Sendable, Equatable {
        /// Not DER SubjectPublicKeyInfo, or bytes follow it.
        case notSubjectPublicKeyInfo
        /// Another kind (curve, RSA size) than those verified here.
        case unsupportedKind
        /// OpenSSL refused the parameters (a point not on the curve, say).
        case refused(OpenSSLError)
    }

    package let kind: Kind
    /// The key as DER SubjectPublicKeyInfo, the same bytes for the same key
    /// however it was encoded: a P-256 key is rebuilt from its point on the
    /// named curve (uncompressed) before OpenSSL encodes it.
    package let canonicalSubjectPublicKeyInfo: [UInt8]
    private let key: OpaquePointer

    private init(taking given: OpaquePointer) throws(Failure) {
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        var key = given
        switch EVP_PKEY_get_base_id(given) {
        case EVP_PKEY_EC
        where EVP_PKEY_get_group_name(given, &name, name.count, &length) == 1
            && String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self) == "prime256v1":
            guard let x = Self.coordinate(given, "qx"), let y = Self.coordinate(given, "qy"),
                let rebuilt = ([0x04] + x + y).withUnsafeBufferPointer({
                    trifactor_pkey_ec_public("prime256v1", $0.baseAddress, $0.count)
                })
            else {
                EVP_PKEY_free(given)
                throw .refused(.last("EVP_PKEY_fromdata(EC)"))
            }
            EVP_PKEY_free(given)
            key = rebuilt
            kind = .p256
        case EVP_PKEY_ED25519:
            kind = .ed25519
        case EVP_PKEY_RSA where (2048...8192).contains(Int(EVP_PKEY_get_bits(given))):
            kind = .rsa(bits: Int(EVP_PKEY_get_bits(given)))
        default:
            EVP_PKEY_free(given)
            OpenSSLError.clear()
            throw .unsupportedKind
        }
        guard let der = Self.encode(key) else {
            EVP_PKEY_free(key)
            throw .refused(.last("i2d_PUBKEY"))
        }
        self.key = key
        canonicalSubjectPublicKeyInfo = der
    }

    /// One affine coordinate of an EC key's point, as 32 big-endian bytes.
    private static func coordinate(_ key: OpaquePointer, _ name: String) -> [UInt8]? {
        var number: OpaquePointer? = nil
        guard EVP_PKEY_get_bn_param(key, name, &number) == 1, let number else { return nil }
        defer { BN_free(number) }
        var bytes = [UInt8](repeating: 0, count: 32)
        return BN_bn2binpad(number, &bytes, 32) == 32 ? bytes : nil
    }

    /// DER SubjectPublicKeyInfo of `key`.
    private static func encode(_ key: OpaquePointer) -> [UInt8]? {
        let length = i2d_PUBKEY(key, nil)
        guard length > 0 else { return nil }
        var out = [UInt8](repeating: 0, count: Int(length))
        let written = out.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_PUBKEY(key, &cursor)
        }
        return written == length ? out : nil
    }

    deinit { EVP_PKEY_free(key) }

    /// Parses DER SubjectPublicKeyInfo, which must end with the key.
    /// - Throws: `.notSubjectPublicKeyInfo`, `.unsupportedKind`.
    package convenience init(subjectPublicKeyInfo der: [UInt8]) throws(Failure) {
        guard !der.isEmpty, der.count <= 2048 else { throw .notSubjectPublicKeyInfo }
        OpenSSLError.clear()
        var consumed = 0
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let key = d2i_PUBKEY(nil, &cursor, buffer.count)
            if let cursor, let start = buffer.baseAddress { consumed = cursor - start }
            return key
        }
        guard let parsed else {
            OpenSSLError.clear()
            throw .notSubjectPublicKeyInfo
        }
        guard consumed == der.count else {
            EVP_PKEY_free(parsed)
            throw .notSubjectPublicKeyInfo
        }
        try self.init(taking: parsed)
    }

    /// A P-256 key from its affine coordinates (32 bytes each).
    /// - Throws: `.refused` for a point not on the curve.
    package convenience init(p256X x: [UInt8], y: [UInt8]) throws(Failure) {
        guard x.count == 32, y.count == 32 else { throw .unsupportedKind }
        OpenSSLError.clear()
        let point = [0x04] + x + y
        guard
            let key = point.withUnsafeBufferPointer({ trifactor_pkey_ec_public("prime256v1", $0.baseAddress, $0.count) }
            )
        else {
            throw .refused(.last("EVP_PKEY_fromdata(EC)"))
        }
        try self.init(taking: key)
    }

    /// An Ed25519 key from its 32 bytes.
    package convenience init(ed25519 raw: [UInt8]) throws(Failure) {
        guard raw.count == 32 else { throw .unsupportedKind }
        OpenSSLError.clear()
        guard let key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, raw, raw.count) else {
            throw .refused(.last("EVP_PKEY_new_raw_public_key"))
        }
        try self.init(taking: key)
    }

    /// An RSA key from its big-endian modulus and public exponent.
    package convenience init(rsaModulus modulus: [UInt8], exponent: [UInt8]) throws(Failure) {
        guard !modulus.isEmpty, modulus.count <= 1024, !exponent.isEmpty, exponent.count <= 8 else {
            throw .unsupportedKind
        }
        OpenSSLError.clear()
        let key = modulus.withUnsafeBufferPointer { n in
            exponent.withUnsafeBufferPointer { e in
                trifactor_pkey_rsa_public(n.baseAddress, n.count, e.baseAddress, e.count)
            }
        }
        guard let key else { throw .refused(.last("EVP_PKEY_fromdata(RSA)")) }
        try self.init(taking: key)
    }

    /// The size of an RSA signature in bytes (0 for other kinds).
    var signatureSize: Int { if case .rsa = kind { Int(EVP_PKEY_get_size(key)) } else { 0 } }

    /// How an RSA signature is padded.
    package enum RSAPadding: Sendable {
        /// RSASSA-PKCS1-v1_5 (RS256).
        case pkcs1
        /// RSASSA-PSS with MGF1 over the same digest and a salt as long as
        /// the digest (PS256, RFC 7518 §3.5).
        case pss
    }

    /// True when `signature` signs `message` under this key, with the
    /// scheme of its kind (ES256, EdDSA, or RS256 or PS256 as `rsaPadding`
    /// says; the padding is ignored for other kinds).
    package func isValidSignature(_ signature: [UInt8], for message: [UInt8], rsaPadding: RSAPadding = .pkcs1)
        -> Bool
    {
        switch kind {
        case .p256: guard (8...72).contains(signature.count) else { return false }
        case .ed25519: guard signature.count == 64 else { return false }
        case .rsa: guard signature.count == signatureSize else { return false }
        }
        OpenSSLError.clear()
        guard let context = EVP_MD_CTX_new() else { return false }
        defer {
            EVP_MD_CTX_free(context)
            // A refused signature leaves reasons on the queue: they are not this caller's business.
            OpenSSLError.clear()
        }
        // Ed25519 is "pure": no separate digest.
        let digest = kind == .ed25519 ? nil : EVP_sha256()
        // The context belongs to `context` and is freed with it.
        var pkeyContext: OpaquePointer? = nil
        guard EVP_DigestVerifyInit(context, &pkeyContext, digest, nil, key) == 1 else { return false }
        if case .rsa = kind, rsaPadding == .pss {
            // MGF1 takes the signature's digest unless told otherwise.
            guard EVP_PKEY_CTX_set_rsa_padding(pkeyContext, RSA_PKCS1_PSS_PADDING) == 1,
                EVP_PKEY_CTX_set_rsa_pss_saltlen(pkeyContext, RSA_PSS_SALTLEN_DIGEST) == 1
            else { return false }
        }
        return EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
    }
}
