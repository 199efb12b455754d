import Foundation
import JOSE

extension TokenService {
    /// The tokens of a grant a user gave (a code redeemed, a device approved): the access token (bound to the
    /// grant's DPoP key or the request's proof), the refresh token when the client has one, and the ID token when
    /// `openid` was granted (OIDC Core §3.1.3.3), with the profile claims when the client takes them there.
    /// - Parameters:
    ///   - nonce: the authorization request's `nonce` (none for a device: RFC 8628 has no nonce).
    ///   - sessionID: the sign-in session the ID token names as `sid`, while it lives.
    func issue(
        _ grant: Grant, client: OIDCClient, nonce: String?, sessionID: String?, refresh: String?, dpop: DPoP.Proof?,
        now: Int64
    ) throws -> Issued {
        var issued = try accessToken(for: grant, now: now, dpop: dpop)
        issued.refreshToken = refresh
        if grant.scopes.contains("openid"), let userID = grant.userID {
            var identity = TokenMinter.Identity(
                subject: userID, clientID: client.id, nonce: nonce, authTime: grant.authTime ?? now,
                acr: grant.acr ?? .password, amr: grant.amr, sessionID: sessionID)
            if client.profileInIDToken {
                identity.profile = try transactions.read {
                    try UserClaims.claims(userID, scopes: grant.scopes, on: $0)
                }
            }
            issued.idToken = try minter.idToken(
                identity, algorithm: Algorithm(rawValue: client.idTokenAlgorithm) ?? .es256, now: now)
        }
        return issued
    }
}
