import Core
import Crypto
import Foundation
import HTTP
import JOSE
import Store
import WebUI

/// An OAuth error answered by the token, revocation and introspection
/// endpoints (RFC 6749 §5.2), as JSON with `Cache-Control: no-store`.
struct OAuthError: Error, Equatable, Sendable {
    let code: String
    let description: String
    var status = 400
    /// `WWW-Authenticate` for a client that tried HTTP Basic (RFC 6749 §5.2 invalid_client).
    var challenge: String?
    /// `DPoP-Nonce`: the nonce a `use_dpop_nonce` answer gives the client (RFC 9449 §8).
    var dpopNonce: String?
    /// `Retry-After` (seconds) of a 429.
    var retryAfter: Int?

    static func invalidRequest(_ d: String) -> Self { Self(code: "invalid_request", description: d) }
    static func invalidGrant(_ d: String) -> Self { Self(code: "invalid_grant", description: d) }
    static func invalidScope(_ d: String) -> Self { Self(code: "invalid_scope", description: d) }
    static func invalidClient(basic: Bool) -> Self {
        Self(
            code: "invalid_client", description: "Client authentication failed.", status: 401,
            challenge: basic ? "Basic realm=\"trifactor\", charset=\"UTF-8\"" : nil)
    }

    var response: Response {
        var headers: [(name: String, value: String)] = [
            ("Content-Type", "application/json"), ("Pragma", "no-cache"),
        ]
        if let challenge { headers.append(("WWW-Authenticate", challenge)) }
        if let dpopNonce { headers.append(("DPoP-Nonce", dpopNonce)) }
        if let retryAfter { headers.append(("Retry-After", String(retryAfter))) }
        let body: [String: JSONValue] = ["error": .string(code), "error_description": .string(description)]
        return Response(status: status, headers: headers, body: JSONValue.serialize(body))
    }
}

/// Who is calling the token, revocation or introspection endpoint
/// (RFC 6749 §2.3): a secret in HTTP Basic or in the body (both accepted for
/// a client registered for either), a `private_key_jwt` assertion (RFC 7523
/// §2.2, its `jti` never accepted twice), or a public client's bare id.
struct ClientAuthentication: Sendable {
    let transactions: Transactions
    let clock: Clock
    /// The audiences an assertion may name: the issuer and the token endpoint.
    let audiences: Set<String>
    /// The issuer, the only audience a FAPI 2.0 client's assertion may name, as a string (§5.3.2.1 8).
    var issuer = ""
    /// Every client is held to FAPI 2.0 (`TRIFACTOR_OIDC_FAPI2`).
    var fapi2Everywhere = false
    /// Registered key sets, read once per text (each read builds an OpenSSL key per JWK).
    let keySets = JWKSetCache()

    static let assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

    /// The algorithms a client's JWTs (assertions, request objects, DPoP proofs) may be signed with: all those
    /// Trifactor verifies, asymmetric only.
    static let algorithms: Set<Algorithm> = [.es256, .rs256, .ps256, .edDSA]
    /// FAPI 2.0 §5.4.1 1: PS256, ES256 or EdDSA (Ed25519), never RS256.
    static let fapi2Algorithms: Set<Algorithm> = [.ps256, .es256, .edDSA]

    /// The algorithms `client` may sign with.
    func algorithms(for client: OIDCClient) -> Set<Algorithm> {
        client.fapi2 || fapi2Everywhere ? Self.fapi2Algorithms : Self.algorithms
    }

    /// The client that sent `request` with `form`.
    /// - Throws: `OAuthError` `invalid_client` (401) or `invalid_request` for more than one method.
    func authenticate(_ request: Request, form: Form) throws -> OIDCClient {
        let basic = Self.basic(request.header("authorization"))
        let posted = form.raw("client_secret")
        let assertion = form.raw("client_assertion")
        // RFC 6749 §2.3: a client must not use more than one method in a request.
        let methods = [basic != nil, posted != nil, assertion != nil].count(where: { $0 })
        guard methods <= 1 else {
            throw OAuthError.invalidRequest("Use one client authentication method, not several.")
        }
        if request.header("authorization") != nil && basic == nil { throw OAuthError.invalidClient(basic: true) }
        if let (id, secret) = basic {
            if let bodyID = form.raw("client_id"), bodyID != id { throw OAuthError.invalidClient(basic: true) }
            return try secretClient(id, secret, basic: true)
        }
        if let posted {
            return try secretClient(form.raw("client_id") ?? "", posted, basic: false)
        }
        if let assertion {
            guard form.raw("client_assertion_type") == Self.assertionType else {
                throw OAuthError.invalidRequest("client_assertion_type must be \(Self.assertionType).")
            }
            return try assertedClient(assertion, claimedID: form.raw("client_id"))
        }
        guard let id = form.raw("client_id"), let client = try find(id), client.isPublic else {
            throw OAuthError.invalidClient(basic: false)
        }
        return client
    }

    private func find(_ id: String) throws -> OIDCClient? {
        // The built-in client of Trifactor's own pages authenticates nowhere: it never gets a code or a token.
        guard !id.isEmpty, id.utf8.count <= 64, !OwnPages.isBuiltIn(id) else { return nil }
        return try transactions.read { try ClientRepository.find(id, on: $0) }
    }

    private func secretClient(_ id: String, _ secret: String, basic: Bool) throws -> OIDCClient {
        guard let client = try find(id), client.authMethod.usesSecret, let stored = client.secretHash,
            ConstantTime.equals(SHA256.hex(secret), stored)
        else { throw OAuthError.invalidClient(basic: basic) }
        return client
    }

    /// RFC 7523 §3: iss and sub are the client, aud names this server, exp is near, jti is new.
    private func assertedClient(_ assertion: String, claimedID: String?) throws -> OIDCClient {
        guard assertion.utf8.count <= 8192, let unverified = Self.unverifiedIssuer(assertion),
            let client = try find(unverified), let set = keys(of: client),
            let verified = try? JWS.verify(assertion, keys: set, allowing: algorithms(for: client)),
            let claims = try? JWTClaims(payload: verified.payload),
            claims.issuer == client.id, claims.subject == client.id, claimedID == nil || claimedID == client.id,
            // One audience, exactly this server (the issuer or its token endpoint): an assertion made for several
            // audiences could have been made for another server's use.
            let audience = claims.audience, audience.count == 1, audiences.contains(audience[0]),
            let exp = claims.expiresAt, let jti = claims.jwtID, !jti.isEmpty, jti.utf8.count <= 256
        else { throw OAuthError.invalidClient(basic: false) }
        // FAPI 2.0 §5.3.2.1 8 (final): its issuer identifier, as a string, and nothing else.
        if client.fapi2 || fapi2Everywhere, claims.values["aud"] != .string(issuer) {
            throw OAuthError.invalidClient(basic: false)
        }
        let now = clock.now().millis / 1000
        // An assertion lives minutes, not hours: a long one could be replayed after its jti is forgotten. Its iat and
        // nbf may be up to 60 s ahead (FAPI 2.0 §5.3.2.1 13: clocks differ; no further).
        guard exp > now - 30, exp <= now + 3600, (claims.notBefore ?? 0) <= now + 60, (claims.issuedAt ?? 0) <= now + 60
        else {
            throw OAuthError.invalidClient(basic: false)
        }
        guard try isFirstUse(of: jti, by: client, expiresAt: exp, now: now) else {
            throw OAuthError.invalidClient(basic: false)
        }
        return client
    }

    /// The JWK Set a `private_key_jwt` client registered, read (once per text of it); nil for other clients or a
    /// set that cannot be read.
    func keys(of client: OIDCClient) -> JWKSet? {
        guard client.authMethod == .privateKeyJWT, let jwks = client.jwks else { return nil }
        return try? keySets.set(jwks)
    }

    /// Records the `jti` of a JWT `client` signed (an assertion, or a request object under `request:`), kept until a
    /// minute after its `exp` (seconds); false when it was recorded already: a replay.
    func isFirstUse(of jti: String, by client: OIDCClient, expiresAt exp: Int64, now: Int64) throws -> Bool {
        try transactions.write { db -> Bool in
            try db.execute("DELETE FROM oidc_client_assertions WHERE expires_at < $1", [.int(now * 1000 - 60_000)])
            return try db.execute(
                "INSERT INTO oidc_client_assertions (client_id, jti, expires_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                [.text(client.id), .text(jti), .int((exp + 60) * 1000)]) == 1
        }
    }

    /// The `iss` of a JWT before its signature is checked: only to find the key that checks it.
    static func unverifiedIssuer(_ token: String) -> String? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(String(parts[1])),
            let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any]
        else { return nil }
        return object["iss"] as? String
    }

    /// `Authorization: Basic` as RFC 6749 §2.3.1 sends it: id and secret form-urlencoded, then joined by a colon.
    static func basic(_ header: String?) -> (String, String)? {
        guard let header, header.count > 6, header.prefix(6).lowercased() == "basic ",
            let data = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
            let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":")
        else { return nil }
        func decode(_ s: Substring) -> String? { s.replacingOccurrences(of: "+", with: " ").removingPercentEncoding }
        guard let id = decode(text[..<colon]), let secret = decode(text[text.index(after: colon)...]) else {
            return nil
        }
        return (id, secret)
    }
}
