package import Foundation

/// Signed JWTs (RFC 7519 §7): claims signed as a compact JWS, and a token
/// verified and its claims validated in one call.
package enum JWT {
    /// Signs `claims` with `key`, `typ` set to `type` (`"JWT"` by default;
    /// RFC 9068 access tokens say `"at+jwt"`).
    /// - Throws: `.cryptoFailure` when OpenSSL fails.
    package static func sign(_ claims: JWTClaims, with key: SigningKey, type: String = "JWT") throws(JOSEError)
        -> String
    {
        try JWS.sign(claims.payload, with: key, type: type)
    }

    /// Verifies `token` against `keys` and validates its claims.
    /// - Throws: what `JWS.verify(_:keys:allowing:)` throws, then `.malformed`
    ///   when the payload is not a claims set, then what
    ///   `JWTClaims.validate(issuer:audience:now:leeway:)` throws.
    package static func verify(
        _ token: String, keys: JWKSet, allowing allowed: Set<Algorithm>, issuer: String, audience: String, now: Date,
        leeway: TimeInterval = 60
    ) throws(JOSEError) -> (header: JWSHeader, claims: JWTClaims) {
        let verified = try JWS.verify(token, keys: keys, allowing: allowed)
        let claims = try JWTClaims(payload: verified.payload)
        try claims.validate(issuer: issuer, audience: audience, now: now, leeway: leeway)
        return (verified.header, claims)
    }
}
