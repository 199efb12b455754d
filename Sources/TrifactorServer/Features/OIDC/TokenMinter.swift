import Core
import Crypto
import Foundation
import JOSE

/// Makes the provider's JWTs: access tokens (RFC 9068: `typ: at+jwt`,
/// ES256, short-lived, audience from the resource indicator) and ID tokens
/// (OIDC Core §2: minimal by default), and reads back the ones it made.
struct TokenMinter: Sendable {
    let keys: SigningKeys
    let issuer: String
    let random: RandomSource

    static let accessTokenLifetime: Int64 = 5 * 60
    static let idTokenLifetime: Int64 = 10 * 60

    /// What an access token says.
    struct Access: Sendable {
        let subject: String
        let clientID: String
        let scopes: [String]
        let audience: String
        /// The grant it came from (nil for `client_credentials`): revoking the grant revokes it.
        let grantID: String?
        var authTime: Int64?
        var acr: ACR?
        var amr: [String] = []
        var sessionID: String?
        /// RFC 9449 §6: the thumbprint of the DPoP key the token is bound to (`cnf.jkt`).
        var dpopJKT: String?
        /// RFC 9396 §9.1: the approved authorization details.
        var authorizationDetails: [JSONValue]?
    }

    /// An RFC 9068 access token and its lifetime in seconds.
    func accessToken(_ a: Access, now: Int64) throws -> (token: String, expiresIn: Int64, jti: String) {
        let seconds = now / 1000
        // The jti names its grant, so introspection and UserInfo see a revoked grant without a second lookup key.
        let jti = (a.grantID.map { "\($0)." } ?? "") + Base64URL.encode(random.bytes(16))
        var claims: [String: JSONValue] = [
            "iss": .string(issuer), "sub": .string(a.subject), "aud": .string(a.audience),
            "client_id": .string(a.clientID), "iat": .integer(seconds),
            "exp": .integer(seconds + Self.accessTokenLifetime),
            "jti": .string(jti), "scope": .string(a.scopes.joined(separator: " ")),
        ]
        if let t = a.authTime { claims["auth_time"] = .integer(t / 1000) }
        if let acr = a.acr { claims["acr"] = .string(acr.rawValue) }
        if !a.amr.isEmpty { claims["amr"] = .array(a.amr.map(JSONValue.string)) }
        if let sid = a.sessionID { claims["sid"] = .string(sid) }
        if let jkt = a.dpopJKT { claims["cnf"] = .object(["jkt": .string(jkt)]) }
        if let details = a.authorizationDetails { claims["authorization_details"] = .array(details) }
        let token = try JWT.sign(JWTClaims(claims), with: try keys.active(.es256), type: "at+jwt")
        return (token, Self.accessTokenLifetime, jti)
    }

    /// What an ID token says about the user's sign-in.
    struct Identity: Sendable {
        let subject: String
        let clientID: String
        let nonce: String?
        let authTime: Int64
        let acr: ACR
        let amr: [String]
        let sessionID: String?
        /// Profile claims, when the client asked for them in ID tokens.
        var profile: [String: JSONValue] = [:]
    }

    func idToken(_ i: Identity, algorithm: Algorithm, now: Int64) throws -> String {
        let seconds = now / 1000
        var claims: [String: JSONValue] = [
            "iss": .string(issuer), "sub": .string(i.subject), "aud": .string(i.clientID), "azp": .string(i.clientID),
            "iat": .integer(seconds), "exp": .integer(seconds + Self.idTokenLifetime),
            "auth_time": .integer(i.authTime / 1000), "acr": .string(i.acr.rawValue),
            "amr": .array(i.amr.map(JSONValue.string)),
        ]
        if let nonce = i.nonce { claims["nonce"] = .string(nonce) }
        if let sid = i.sessionID { claims["sid"] = .string(sid) }
        for (name, value) in i.profile where claims[name] == nil { claims[name] = value }
        return try JWT.sign(JWTClaims(claims), with: try keys.active(algorithm))
    }

    /// A back-channel logout token (Back-Channel Logout 1.0 §2.4): the session `sid` of `subject` ended. Explicitly
    /// typed `logout+jwt` (§2.4 recommends it) so it can never pass for an ID token.
    func logoutToken(clientID: String, subject: String, sessionID: String, algorithm: Algorithm, now: Int64) throws
        -> String
    {
        let seconds = now / 1000
        let claims: [String: JSONValue] = [
            "iss": .string(issuer), "aud": .string(clientID), "iat": .integer(seconds), "exp": .integer(seconds + 600),
            "jti": .string(Base64URL.encode(random.bytes(16))), "sub": .string(subject), "sid": .string(sessionID),
            "events": .object(["http://schemas.openid.net/event/backchannel-logout": .object([:])]),
        ]
        // Made inside the sign-out's transaction: the keys read at start (and every 10 s) sign, with no second
        // connection taken from the pool while this one is held.
        return try JWT.sign(
            JWTClaims(claims), with: try keys.cachedActive(algorithm) ?? keys.active(algorithm), type: "logout+jwt")
    }

    /// The claims of an access token this provider signed, checked: signature, `typ`, issuer, audience (nil: any,
    /// for introspection and revocation), expiry.
    func readAccessToken(_ token: String, audiences: Set<String>?, now: Int64) -> JWTClaims? {
        guard token.utf8.count <= 8192, let set = try? keys.published(),
            let verified = try? JWS.verify(token, keys: set, allowing: [.es256]),
            verified.header.type?.lowercased() == "at+jwt",
            let claims = try? JWTClaims(payload: verified.payload), claims.issuer == issuer,
            let exp = claims.expiresAt, exp > now / 1000,
            let aud = claims.audience, audiences.map({ wanted in aud.contains(where: wanted.contains) }) ?? true
        else { return nil }
        return claims
    }

    /// The subject of an ID token this provider issued to `clientID`, whether or not it has expired
    /// (OIDC Core §3.1.2.1 `id_token_hint`; RP-Initiated Logout §2).
    func hintedSubject(_ token: String, clientID: String?) -> (subject: String, clientID: String, sid: String?)? {
        guard token.utf8.count <= 8192, let set = try? keys.published(),
            let verified = try? JWS.verify(token, keys: set, allowing: [.es256, .rs256]),
            verified.header.type?.lowercased() != "at+jwt",
            let claims = try? JWTClaims(payload: verified.payload), claims.issuer == issuer,
            let subject = claims.subject, let aud = claims.audience, aud.count == 1
        else { return nil }
        if let clientID, aud[0] != clientID { return nil }
        return (subject, aud[0], claims.string("sid"))
    }

    /// RFC 8176 methods of a session, with `mfa` when it proved two factors.
    static func amr(_ s: SessionRecord) -> [String] {
        var out = s.methods.map(\.rawValue)
        if s.aal >= .aal2 && !out.contains("mfa") { out.append("mfa") }
        return out
    }
}
