package import Foundation

extension JWTClaims {
    /// Checks the registered claims a relying party or Trifactor itself must
    /// check before trusting a verified token: `iss` is `issuer`, `aud` holds
    /// `audience`, `exp` is ahead and `nbf` (if any) behind, each time
    /// compared with `leeway` seconds of grace for clocks that disagree.
    ///
    /// - Important: `exp` is required: a token that never expires is refused
    ///   as `.malformed`, since nothing Trifactor issues is meant to live forever.
    /// - Parameter now: the request's clock reading, passed in (never read here).
    /// - Throws: `.malformed` for a missing `iss`, `aud` or `exp` or a claim
    ///   of the wrong type; then `.wrongIssuer`, `.wrongAudience`,
    ///   `.expired`, `.notYetValid`, in that order.
    package func validate(issuer: String, audience: String, now: Date, leeway: TimeInterval = 60) throws(JOSEError) {
        guard let tokenIssuer = self.issuer, let tokenAudience = self.audience, let expiresAt else {
            throw .malformed
        }
        if values["nbf"] != nil && notBefore == nil { throw .malformed }
        if values["iat"] != nil && issuedAt == nil { throw .malformed }
        guard tokenIssuer == issuer else { throw .wrongIssuer }
        guard tokenAudience.contains(audience) else { throw .wrongAudience }
        let seconds = now.timeIntervalSince1970
        // RFC 7519 §4.1.4: valid only while now is before exp.
        guard seconds < Double(expiresAt) + leeway else { throw .expired }
        // RFC 7519 §4.1.5: valid from nbf on.
        if let notBefore, seconds + leeway < Double(notBefore) { throw .notYetValid }
    }
}
