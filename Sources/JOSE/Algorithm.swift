/// The JWS algorithms Trifactor signs and verifies with (RFC 7518 §3.1,
/// RFC 8037 §3.1). `none` and the HMAC algorithms have no case on purpose:
/// a caller cannot allow what it cannot name.
package enum Algorithm: String, Sendable, Hashable, CaseIterable {
    /// ECDSA on P-256 with SHA-256; the signature is raw R || S (RFC 7518 §3.4).
    case es256 = "ES256"
    /// RSASSA-PKCS1-v1_5 with SHA-256 (RFC 7518 §3.3), keys of 2048 bits or more.
    case rs256 = "RS256"
    /// RSASSA-PSS with SHA-256, MGF1 with SHA-256 and a 32-byte salt
    /// (RFC 7518 §3.5), keys of 2048 bits or more. Verified only: Trifactor
    /// signs nothing with it.
    case ps256 = "PS256"
    /// EdDSA on Ed25519 (RFC 8037 §3.1; Ed448 keys are not read). Verified
    /// only: Trifactor signs nothing with it.
    case edDSA = "EdDSA"

    /// The algorithms Trifactor's own keys sign with (`SigningKey`).
    package static let signing: [Algorithm] = [.es256, .rs256]

    /// The JWK `kty` of its keys.
    var keyType: String {
        switch self {
        case .es256: "EC"
        case .rs256, .ps256: "RSA"
        case .edDSA: "OKP"
        }
    }
}
