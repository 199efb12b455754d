/// Why a token, a key or a key set was refused, or a token could not be
/// made. The cases name the rule that failed and never carry the token, a
/// claim's value or key material, so a description is safe to log.
package enum JOSEError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not a compact JWS or JWT as Trifactor reads them: wrong shape, size,
    /// base64url, JSON or member types, or a required claim missing.
    case malformed
    /// The header's `alg` is not one the caller allows (`none` never is).
    case algorithmNotAllowed
    /// The header names a critical extension (`crit`), which Trifactor
    /// understands none of (RFC 7515 §4.1.11).
    case criticalHeader
    /// No key in the set has the header's `kid` (or the header has none).
    case unknownKey
    /// The key's type, curve or own `alg` does not fit the header's `alg`.
    case keyAlgorithmMismatch
    /// The signature does not verify under the key.
    case badSignature
    /// A JWK or key set that breaks a rule: private members, a wrong
    /// length, a point off the curve, RSA under 2048 bits, a duplicate `kid`.
    case invalidKey
    /// A JWK of a kind Trifactor does not use (`kty`, `crv`, `alg`, `use`).
    case unsupportedKey
    /// `exp` is past, beyond the leeway.
    case expired
    /// `nbf` is still ahead, beyond the leeway.
    case notYetValid
    /// `iss` is not the expected issuer.
    case wrongIssuer
    /// `aud` does not hold the expected audience.
    case wrongAudience
    /// OpenSSL failed to make, export or use a key (the call is in `operation`).
    case cryptoFailure(operation: String)

    package var description: String {
        switch self {
        case .malformed: "the token is malformed"
        case .algorithmNotAllowed: "the token's algorithm is not allowed"
        case .criticalHeader: "the token has critical header parameters"
        case .unknownKey: "the token's key is unknown"
        case .keyAlgorithmMismatch: "the key does not fit the token's algorithm"
        case .badSignature: "the token's signature does not verify"
        case .invalidKey: "the key is invalid"
        case .unsupportedKey: "the key is of an unsupported kind"
        case .expired: "the token has expired"
        case .notYetValid: "the token is not valid yet"
        case .wrongIssuer: "the token is from another issuer"
        case .wrongAudience: "the token is for another audience"
        case .cryptoFailure(let operation): "a cryptographic operation failed (\(operation))"
        }
    }
}
