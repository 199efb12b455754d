import Core
import Foundation
import JOSE

extension ClientAuthentication {
    /// RFC 9101 §4, §10.8: the `typ` of a request object (the `application/` prefix may be left out, RFC 7515 §4.1.9).
    static let requestObjectType = "oauth-authz-req+jwt"
    /// FAPI 2.0 Message Signing (signed authorization requests): `exp` at most 60 minutes after `nbf`, and `nbf` at
    /// most 60 minutes in the past. Held of every client, FAPI or not: a request object is pushed within seconds.
    static let requestObjectLifetime: Int64 = 60 * 60
    /// JWT claims that describe the request object itself, not the authorization request (RFC 7519 §4.1).
    static let requestObjectEnvelope: Set<String> = ["iss", "aud", "exp", "nbf", "iat", "jti", "sub"]

    /// The authorization request a client pushed as a signed request object (RFC 9126 §3, RFC 9101 §4-§6): its
    /// signature verified with a key of the client's registered JWK Set, by the algorithms the client may use (those
    /// of its client assertions), and its claims checked; they ARE the request (RFC 9126 §3: the form's other
    /// parameters, beyond client authentication, are not used).
    /// - Returns: the request's parameters, each as the text the authorization endpoint's parser reads (a number in
    ///   decimal, an array or object such as `authorization_details` or `claims` as its JSON text).
    /// - Throws: `OAuthError` `invalid_request_object` (RFC 9126 §2.3, RFC 9101 §6.3) naming the rule broken.
    func requestObjectParameters(_ token: String, client: OIDCClient) throws -> [String: String] {
        func refused(_ reason: String) -> OAuthError { OAuthError(code: "invalid_request_object", description: reason) }
        guard token.utf8.count <= JWS.maximumLength else {
            throw refused("The request object is longer than \(JWS.maximumLength / 1024) KiB.")
        }
        // The header is read here only to say what is wrong with it; the signature check below decides.
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count == 5 {
            throw refused("The request object is encrypted (JWE, RFC 9101 §6.1): this server reads signed ones only.")
        }
        guard parts.count == 3, let headerBytes = StrictBase64URL.decode(parts[0]),
            let header = try? JSONValue.parseObject(headerBytes)
        else { throw refused("The request object is not a compact JWS (RFC 9101 §4, RFC 7515 §7.1).") }
        let allowed = algorithms(for: client)
        let names = allowed.map(\.rawValue).sorted().joined(separator: ", ")
        // RFC 9126 §3, RFC 9101 §6.2: the pushed object is signed by the client; an unsigned one proves nothing.
        if header["alg"] == "none" {
            throw refused("The request object is unsigned (alg none): sign it with \(names) (RFC 9101 §6.2).")
        }
        guard let alg = header["alg"]?.string, allowed.contains(where: { $0.rawValue == alg }) else {
            throw refused("The request object's alg must be one of \(names) for this client (FAPI 2.0 §5.4.1).")
        }
        // RFC 9101 §4: typ is recommended, and when present says this is a request object, not another JWT.
        if let type = header["typ"] {
            guard let text = type.string?.lowercased(),
                text == Self.requestObjectType || text == "application/" + Self.requestObjectType
            else { throw refused("The request object's typ must be \(Self.requestObjectType) (RFC 9101 §4).") }
        }
        guard let keys = self.keys(of: client), !keys.keys.isEmpty else {
            throw refused("This client has no registered JWK Set (private_key_jwt) to verify request objects with.")
        }
        let verified: JWS.Verified
        do {
            // A kid is needed to choose among several keys; with one key there is nothing to choose.
            verified =
                header["kid"] == nil && keys.keys.count == 1
                ? try JWS.verify(token, key: keys.keys[0], allowing: allowed)
                : try JWS.verify(token, keys: keys, allowing: allowed)
        } catch JOSEError.unknownKey {
            throw refused("The request object's kid names no key of the client's registered JWK Set.")
        } catch JOSEError.criticalHeader {
            throw refused("The request object has critical header parameters (crit) this server does not understand.")
        } catch {
            throw refused("The request object's signature does not verify with the client's registered keys.")
        }
        guard let claims = try? JWTClaims(payload: verified.payload) else {
            throw refused("The request object's payload is not a JSON object of claims.")
        }
        try checkEnvelope(claims, client: client, refused)
        // RFC 9101 §4: a request object holds neither request nor request_uri.
        if claims["request"] != nil || claims["request_uri"] != nil {
            throw refused("The request object must not contain request or request_uri (RFC 9101 §4).")
        }
        var parameters: [String: String] = [:]
        for (name, value) in claims.values where !Self.requestObjectEnvelope.contains(name) {
            switch value {
            case .null: continue
            case .string(let text): parameters[name] = text
            case .bool(let flag): parameters[name] = flag ? "true" : "false"
            default: parameters[name] = String(decoding: value.serialized, as: UTF8.self)
            }
        }
        return parameters
    }

    /// The claims about the object itself: who made it, for whom, when it holds, and that it is new.
    private func checkEnvelope(_ claims: JWTClaims, client: OIDCClient, _ refused: (String) -> OAuthError) throws {
        // RFC 9101 §4: iss is the client; RFC 9126 §3: a client_id claim, if any, is the authenticated client.
        guard claims["iss"] == .string(client.id) else {
            throw refused("The request object's iss must be the client's client_id (RFC 9101 §4).")
        }
        if let named = claims["client_id"], named != .string(client.id) {
            throw refused("The request object's client_id is not the authenticated client (RFC 9126 §3).")
        }
        // RFC 9101 §4: aud is this server's issuer identifier, alone or in an array (FAPI 2.0 Message Signing alike).
        guard let audience = claims.audience, audience.contains(issuer) else {
            throw refused("The request object's aud must be this server's issuer identifier, \(issuer) (RFC 9101 §4).")
        }
        for name in ["exp", "nbf", "iat"] where claims[name] != nil && claims.seconds(name) == nil {
            throw refused("The request object's \(name) must be a NumericDate (RFC 7519 §2).")
        }
        let now = clock.now().millis / 1000
        let fapi2 = client.fapi2 || fapi2Everywhere
        guard let exp = claims.expiresAt else {
            throw refused("The request object needs an exp (FAPI 2.0 Message Signing).")
        }
        guard exp > now else { throw refused("The request object has expired (its exp is past).") }
        if let nbf = claims.notBefore {
            // FAPI 2.0 §5.3.2.1 13: a timestamp up to 60 s ahead is a clock difference; beyond, not valid yet.
            guard nbf <= now + 60 else { throw refused("The request object is not valid yet (its nbf is ahead).") }
            guard nbf >= now - Self.requestObjectLifetime else {
                throw refused(
                    "The request object's nbf is more than 60 minutes in the past (FAPI 2.0 Message Signing).")
            }
            guard exp - nbf <= Self.requestObjectLifetime else {
                throw refused(
                    "The request object's exp is more than 60 minutes after its nbf (FAPI 2.0 Message Signing).")
            }
        } else if fapi2 {
            throw refused("The request object of a FAPI 2.0 client needs an nbf (FAPI 2.0 Message Signing).")
        } else if exp > now + Self.requestObjectLifetime {
            throw refused("The request object's exp is more than 60 minutes ahead.")
        }
        // RFC 7519 §4.1.7: a jti, when sent, is taken once (kept beside the client assertions' until exp has passed).
        if let jti = claims["jti"] {
            guard let text = jti.string, (1...256).contains(text.utf8.count) else {
                throw refused("The request object's jti must be a string of 1 to 256 bytes.")
            }
            guard try isFirstUse(of: "request:" + text, by: client, expiresAt: exp, now: now) else {
                throw refused("The request object was used already (its jti, RFC 7519 §4.1.7).")
            }
        }
    }
}
