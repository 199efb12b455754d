/// A device's P-256 public key (SubjectPublicKeyInfo, DER), verifying ES256
/// signatures (ECDSA over SHA-256, DER-encoded): a `PublicKey` that must be
/// P-256. DER with bytes after the key is refused. One key has one
/// `canonicalSubjectPublicKeyInfo`, however it was encoded (compressed
/// point, explicit curve parameters): store and compare that.
package struct ECDSAPublicKey: Sendable {
    /// Why a key was refused.
    package enum Failure: Error, Sendable, Equatable {
        case notSubjectPublicKeyInfo
        case notP256
    }

    private let key: PublicKey
    /// The key as DER SubjectPublicKeyInfo with the named curve and the
    /// uncompressed point: the same bytes for the same key, always.
    package let canonicalSubjectPublicKeyInfo: [UInt8]

    /// Parses a DER SubjectPublicKeyInfo of a P-256 key.
    /// - Throws: `Failure` when it is not one, or bytes follow it.
    package init(subjectPublicKeyInfo der: [UInt8]) throws(Failure) {
        do {
            key = try PublicKey(subjectPublicKeyInfo: der)
        } catch .notSubjectPublicKeyInfo {
            throw .notSubjectPublicKeyInfo
        } catch {
            throw .notP256
        }
        guard key.kind == .p256 else { throw .notP256 }
        canonicalSubjectPublicKeyInfo = key.canonicalSubjectPublicKeyInfo
    }

    /// True when `signature` (DER ECDSA) signs SHA-256(`message`) under this key.
    package func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        key.isValidSignature(signature, for: message)
    }
}
