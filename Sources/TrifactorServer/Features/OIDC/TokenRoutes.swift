import Core
import Crypto
import Foundation
import HTTP
import JOSE
import Store
import WebUI

/// The provider's machine endpoints: token (RFC 6749 §3.2), UserInfo (OIDC
/// Core §5.3), revocation (RFC 7009), introspection (RFC 7662), the JWK Set
/// and discovery (OIDC Discovery, RFC 8414). Errors take the form each
/// spec prescribes, never problem+json.
struct TokenRoutes: Sendable {
    let tokens: TokenService
    let flows: FlowService
    let dpop: DPoP
    let backchannel: BackchannelService
    /// Every client is held to FAPI 2.0 (`TRIFACTOR_OIDC_FAPI2`).
    var fapi2Everywhere = false
    let clients: ClientAuthentication
    let minter: TokenMinter
    let keys: SigningKeys
    let metadata: ProviderMetadata
    let transactions: Transactions
    let clock: Clock

    func register(on router: inout Router) {
        router.add("POST", "/token", execution: .database, oauth(token))
        router.add("POST", "/par", execution: .database, oauth(par))
        router.add("POST", "/device_authorization", execution: .database, oauth(deviceAuthorization))
        router.add("POST", "/bc-authorize", execution: .database, oauth(backchannelAuthorize))
        router.add("GET", "/userinfo", execution: .database, userInfo)
        router.add("POST", "/userinfo", execution: .database, userInfo)
        router.add("POST", "/revoke", execution: .database, oauth(revoke))
        router.add("POST", "/introspect", execution: .database, oauth(introspect))
        router.add("POST", "/authorization_details/consume", execution: .database, oauth(consumeDetails))
        router.add("GET", "/jwks", execution: .database) { _ in
            Response(
                status: 200,
                headers: [("Content-Type", "application/jwk-set+json"), ("Cache-Control", "public, max-age=60")],
                body: try keys.published().json)
        }
        let document = metadata.json
        for path in ["/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"] {
            router.add("GET", path, execution: .inline) { _ in
                Response(
                    status: 200,
                    headers: [("Content-Type", "application/json"), ("Cache-Control", "public, max-age=300")],
                    body: document)
            }
        }
    }

    /// A form-posted OAuth endpoint whose failures answer as RFC 6749 §5.2 says.
    func oauth(_ handler: @escaping @Sendable (Request, Form) throws -> Response) -> Router.Handler {
        { request in
            do {
                let type = request.header("content-type")?.lowercased() ?? ""
                guard type.hasPrefix("application/x-www-form-urlencoded") else {
                    throw OAuthError.invalidRequest("Send the parameters as application/x-www-form-urlencoded.")
                }
                let form = Form(request.body)
                // RFC 6749 §3.2: parameters must not be included more than once.
                if let name = form.repeated.sorted().first {
                    throw OAuthError.invalidRequest("\(name.prefix(40)) is repeated.")
                }
                return try handler(request, form)
            } catch let error as OAuthError {
                return error.response
            }
        }
    }

    /// Refused token requests audited per client address: 20 at once, then one a minute (refusals past the budget
    /// are still refused, only no longer written down, so a flood cannot fill the audit log).
    static let auditBudget = RateLimiter.Limit(burst: 20, rate: 1.0 / 60)

    /// `POST /par` (RFC 9126 §2): the client authenticates as at the token endpoint and pushes an authorization
    /// request; 201 with its `request_uri`. A refusal for a wrong client is audited as the token endpoint's are.
    func par(_ request: Request, _ form: Form) throws -> Response {
        try auditingRefusals(request, form) {
            let client = try fapiAuthenticated(request, form)
            let fapi2 = client.fapi2 || fapi2Everywhere
            var parameters = form.fields
            for name in ["client_secret", "client_assertion", "client_assertion_type"] { parameters[name] = nil }
            if let object = form.raw("request") {
                // RFC 9126 §3: the signed request object's claims are the request; the form's other parameters, beyond
                // client authentication, are not used (RFC 9101 §6.3 would ignore them too).
                parameters = try clients.requestObjectParameters(object, client: client)
            }
            // RFC 9449 §10.1: a proof sent with the push binds the code to its key, as dpop_jkt would (both: the same).
            if let proof = try proof(request, path: "/par", fapi2: fapi2) {
                if let named = parameters["dpop_jkt"], named != proof.thumbprint {
                    throw OAuthError(
                        code: "invalid_dpop_proof", description: "dpop_jkt is not the thumbprint of the proof's key.")
                }
                parameters["dpop_jkt"] = proof.thumbprint
            }
            let pushed = try flows.push(parameters, client: client, audit: AuditContext(request))
            let body: [String: JSONValue] = [
                "request_uri": .string(pushed.requestURI), "expires_in": .integer(Int64(pushed.expiresIn)),
            ]
            return Response(
                status: 201, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")],
                body: JSONValue.serialize(body))
        }
    }

    /// `POST /token`; a refusal for a wrong client or grant is audited as `oidc.token_refused`.
    func token(_ request: Request, _ form: Form) throws -> Response {
        try auditingRefusals(request, form) { try grant(request, form) }
    }

    /// Runs `body`; a refusal for a wrong client or grant is audited as `oidc.token_refused`, within the budget.
    func auditingRefusals(_ request: Request, _ form: Form, _ body: () throws -> Response) throws -> Response {
        do {
            return try body()
        } catch let error as OAuthError where ["invalid_client", "invalid_grant"].contains(error.code) {
            let audit = AuditContext(request)
            let now = clock.now().millis
            try transactions.write { db in
                guard
                    try RateLimiter.take(
                        "token:audit:\(audit.clientKey)", limit: Self.auditBudget, nowMillis: now, on: db)
                        == nil
                else { return }
                let client =
                    form.raw("client_id") ?? ClientAuthentication.basic(request.header("authorization"))?.0 ?? "?"
                try AuditLog.append(
                    audit.event(
                        .oidcTokenRefused, .denied,
                        detail:
                            "client=\(client.prefix(64)) grant=\(form.raw("grant_type")?.prefix(32) ?? "?") \(error.code)"
                    ),
                    at: now, on: db)
            }
            throw error
        }
    }

    private func grant(_ request: Request, _ form: Form) throws -> Response {
        let client = try fapiAuthenticated(request, form)
        let fapi2 = client.fapi2 || fapi2Everywhere
        let audit = AuditContext(request)
        // RFC 9449 §5: a proof binds the tokens issued to its key.
        let proof = try proof(request, path: "/token", fapi2: fapi2)
        let issued: TokenService.Issued
        // FAPI 2.0 §5.3.2.1 4: only sender-constrained tokens; RFC 9449 §5.2, dpop_bound_access_tokens.
        if (fapi2 || client.dpopBound) && proof == nil {
            throw OAuthError(
                code: "invalid_dpop_proof",
                description: "This client's tokens are bound to a DPoP key: send a DPoP proof.")
        }
        switch form.raw("grant_type") {
        case "authorization_code":
            guard let code = form.raw("code"), !code.isEmpty else {
                throw OAuthError.invalidRequest("code is required.")
            }
            issued = try tokens.exchange(
                code: code, client: client, redirectURI: form.raw("redirect_uri"), verifier: form.raw("code_verifier"),
                resource: form.raw("resource"), dpop: proof, audit: audit)
        case "refresh_token":
            guard let token = form.raw("refresh_token"), !token.isEmpty else {
                throw OAuthError.invalidRequest("refresh_token is required.")
            }
            issued = try tokens.refresh(
                token, client: client, scope: form.raw("scope"), resource: form.raw("resource"), dpop: proof,
                rotate: !fapi2, audit: audit)
        case "client_credentials":
            issued = try tokens.clientCredentials(
                client: client, scope: form.raw("scope"), resource: form.raw("resource"), dpop: proof, audit: audit)
        case "urn:ietf:params:oauth:grant-type:device_code":
            guard let deviceCode = form.raw("device_code"), !deviceCode.isEmpty else {
                throw OAuthError.invalidRequest("device_code is required.")
            }
            issued = try devices.redeem(deviceCode: deviceCode, client: client, dpop: proof, audit: audit)
        case OIDCClient.GrantType.ciba.rawValue:
            guard let id = form.raw("auth_req_id"), !id.isEmpty else {
                throw OAuthError.invalidRequest("auth_req_id is required.")
            }
            issued = try tokens.backchannel(id, client: client, dpop: proof, audit: audit)
        case nil:
            throw OAuthError.invalidRequest("grant_type is required.")
        default:
            throw OAuthError(code: "unsupported_grant_type", description: "This grant type is not supported.")
        }
        var body: [String: JSONValue] = [
            "access_token": .string(issued.accessToken), "token_type": .string(issued.tokenType),
            "expires_in": .integer(issued.expiresIn), "scope": .string(issued.scope),
        ]
        if let refresh = issued.refreshToken { body["refresh_token"] = .string(refresh) }
        if let id = issued.idToken { body["id_token"] = .string(id) }
        if let details = issued.authorizationDetails { body["authorization_details"] = .array(details) }
        var response = Self.json(body)
        // RFC 9449 §8.2: the next nonce rides along, so the client need not be refused for it first.
        if proof != nil, let nonces = dpop.nonces {
            response.headers.append(("DPoP-Nonce", nonces.current(clock.now().millis / 1000)))
        }
        return response
    }

    /// `GET` and `POST /userinfo`: the bearer token in the header, or in the form body of a POST (RFC 6750 §2.2);
    /// a DPoP-bound token only as `Authorization: DPoP` with a proof of its key (RFC 9449 §7).
    func userInfo(_ request: Request) throws -> Response {
        var token = request.bearerToken
        var scheme = "Bearer"
        if let authorization = request.header("authorization"), authorization.lowercased().hasPrefix("dpop ") {
            scheme = "DPoP"
            token = authorization.dropFirst(5).trimmingCharacters(in: .whitespaces)
        }
        if token == nil, request.method == "POST",
            request.header("content-type")?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true
        {
            token = Form(request.body).raw("access_token")
        }
        // RFC 6750 §3 and RFC 9449 §7.1: no token is a bare challenge, for either scheme.
        guard let token, !token.isEmpty else {
            let algorithms = DPoP.algorithms.map(\.rawValue).sorted().joined(separator: " ")
            return Response(status: 401, headers: [("WWW-Authenticate", "Bearer, DPoP algs=\"\(algorithms)\"")])
        }
        // A refusal in the scheme the token came in.
        func refuse(_ code: String, status: Int = 401) -> Response {
            scheme == "DPoP" ? Self.dpopError(code, status: status) : Self.bearerError(code, status: status)
        }
        let now = clock.now().millis
        guard let claims = minter.readAccessToken(token, audiences: [minter.issuer], now: now),
            let subject = claims.subject, let jti = claims.jwtID,
            let scopes = claims.string("scope").map({ $0.split(separator: " ").map(String.init) })
        else { return scheme == "DPoP" ? Self.dpopError("invalid_token") : Self.bearerError("invalid_token") }
        if case .object(let cnf)? = claims.values["cnf"], let jkt = cnf["jkt"]?.string {
            // §7.1: a bound token is presented with the DPoP scheme and a proof of its key, never as a bearer token.
            guard scheme == "DPoP", let header = request.header("dpop") else { return Self.dpopError("invalid_token") }
            do {
                let proof = try dpop.check(
                    header, method: request.method, url: minter.issuer + "/userinfo", accessToken: token)
                guard proof.thumbprint == jkt else { return Self.dpopError("invalid_dpop_proof") }
            } catch DPoP.Failure.nonce(_, let fresh) {
                return Self.dpopError("use_dpop_nonce", nonce: fresh)
            } catch is DPoP.Failure {
                return Self.dpopError("invalid_dpop_proof")
            }
        } else if scheme == "DPoP" {
            return Self.dpopError("invalid_token")
        }
        guard scopes.contains("openid") else { return refuse("insufficient_scope", status: 403) }
        let released = try transactions.read { db -> [String: JSONValue]? in
            guard try Self.isLive(jti: jti, on: db) else { return nil }
            return try UserClaims.claims(subject, scopes: scopes, on: db)
        }
        guard let released else { return refuse("invalid_token") }
        var body = released
        body["sub"] = .string(subject)
        return Self.json(body)
    }

    /// Whether an access token's grant stands and the token itself was not revoked.
    static func isLive(jti: String, on db: any SQLConnection) throws -> Bool {
        if try GrantRepository.isRevoked(jti: jti, on: db) { return false }
        guard let dot = jti.firstIndex(of: ".") else { return true }
        guard let grant = try GrantRepository.find(String(jti[..<dot]), on: db) else { return false }
        return grant.revokedAt == nil
    }

    /// The client, authenticated; a FAPI 2.0 client (its own flag, or the server-wide switch) by `private_key_jwt`
    /// alone (§5.3.2.1 6), at every endpoint, as discovery says.
    func fapiAuthenticated(_ request: Request, _ form: Form) throws -> OIDCClient {
        let client = try clients.authenticate(request, form: form)
        if (client.fapi2 || fapi2Everywhere) && client.authMethod != .privateKeyJWT {
            throw OAuthError.invalidClient(basic: ClientAuthentication.basic(request.header("authorization")) != nil)
        }
        return client
    }

    /// `POST /revoke` (RFC 7009): always 200 for a token that is unknown, already revoked or another client's.
    func revoke(_ request: Request, _ form: Form) throws -> Response {
        let client = try fapiAuthenticated(request, form)
        guard let token = form.raw("token"), !token.isEmpty else {
            throw OAuthError.invalidRequest("token is required.")
        }
        let now = clock.now().millis
        try transactions.write { db in
            if let grant = try GrantRepository.find(refreshHash: SHA256.hex(token), on: db), grant.clientID == client.id
            {
                // §2.1: revoking a refresh token revokes the access tokens of its grant too.
                try GrantRepository.revoke(grant.id, at: now, on: db)
                try AuditLog.append(
                    AuditContext(request).event(
                        .oidcTokenRevoked, .success, userID: grant.userID.map(UserID.init),
                        detail: "client=\(client.id) refresh_token"), at: now, on: db)
            } else if let claims = minter.readAccessToken(token, audiences: Self.anyAudience, now: now),
                claims.string("client_id") == client.id, let jti = claims.jwtID, let exp = claims.expiresAt
            {
                try GrantRepository.revokeAccessToken(jti: jti, expiresAt: exp * 1000, on: db)
                try AuditLog.append(
                    AuditContext(request).event(
                        .oidcTokenRevoked, .success, detail: "client=\(client.id) access_token"),
                    at: now, on: db)
            }
        }
        return Response(status: 200, headers: [])
    }

    /// `POST /introspect` (RFC 7662) for resource servers the operator registered as confidential clients.
    func introspect(_ request: Request, _ form: Form) throws -> Response {
        let client = try fapiAuthenticated(request, form)
        // Introspection is for the operator's resource servers: a public or self-registered client may not ask
        // whether anyone else's token is live (RFC 7662 §4 leaves who may to the server).
        guard !client.isPublic else { throw OAuthError.invalidClient(basic: false) }
        guard client.registeredBy != .dynamic else {
            throw OAuthError(
                code: "unauthorized_client", description: "This client may not introspect tokens.", status: 403)
        }
        guard let token = form.raw("token"), !token.isEmpty else {
            throw OAuthError.invalidRequest("token is required.")
        }
        let now = clock.now().millis
        let inactive: [String: JSONValue] = ["active": .bool(false)]
        if let claims = minter.readAccessToken(token, audiences: Self.anyAudience, now: now), let jti = claims.jwtID {
            guard try transactions.read({ try Self.isLive(jti: jti, on: $0) }) else { return Self.json(inactive) }
            var body = claims.values
            body["active"] = .bool(true)
            // RFC 9449 §6.2: a bound token's cnf.jkt is in the claims, for the resource server to check.
            body["token_type"] = .string(body["cnf"] == nil ? "Bearer" : "DPoP")
            return Self.json(body)
        }
        let grant = try transactions.read { try GrantRepository.find(refreshHash: SHA256.hex(token), on: $0) }
        guard let grant, grant.clientID == client.id, grant.revokedAt == nil, let exp = grant.refreshExpiresAt,
            exp > now
        else { return Self.json(inactive) }
        var body: [String: JSONValue] = [
            "active": .bool(true), "client_id": .string(grant.clientID),
            "scope": .string(grant.scopes.joined(separator: " ")),
            "exp": .integer(exp / 1000), "iat": .integer(grant.createdAt / 1000), "iss": .string(minter.issuer),
            "token_type": .string("refresh_token"),
        ]
        if let sub = grant.userID { body["sub"] = .string(sub) }
        return Self.json(body)
    }

    /// The request's DPoP proof for POST `path` (nil without one), checked with the algorithms the client may use
    /// (FAPI 2.0 §5.4.1 for a FAPI client); a bad one is the token endpoint's `invalid_dpop_proof` or `use_dpop_nonce`
    /// (RFC 9449 §5, §8).
    func proof(_ request: Request, path: String, fapi2: Bool, accessToken: String? = nil) throws -> DPoP.Proof? {
        guard let header = request.header("dpop") else { return nil }
        do {
            return try dpop.check(
                header, method: "POST", url: minter.issuer + path, accessToken: accessToken,
                algorithms: fapi2 ? ClientAuthentication.fapi2Algorithms : DPoP.algorithms)
        } catch let failure as DPoP.Failure {
            throw failure.tokenEndpointError
        }
    }

    /// Introspection and revocation take access tokens of any audience (a resource server's own).
    static let anyAudience: Set<String>? = nil

    static func json(_ body: [String: JSONValue], status: Int = 200) -> Response {
        Response(
            status: status, headers: [("Content-Type", "application/json"), ("Pragma", "no-cache")],
            body: JSONValue.serialize(body))
    }

    /// RFC 6750 §3: no token is a bare challenge; a bad one names its error.
    /// A refusal of a DPoP-bound request (RFC 9449 §7.1): `WWW-Authenticate: DPoP`, with the nonce to use when asked.
    static func dpopError(_ code: String, nonce: String? = nil, status: Int = 401) -> Response {
        let algorithms = DPoP.algorithms.map(\.rawValue).sorted().joined(separator: " ")
        var headers: [(name: String, value: String)] = [
            ("WWW-Authenticate", "DPoP error=\"\(code)\", algs=\"\(algorithms)\"")
        ]
        if let nonce { headers.append(("DPoP-Nonce", nonce)) }
        return Response(status: status, headers: headers)
    }

    static func bearerError(_ code: String?, status: Int = 401) -> Response {
        let challenge = code.map { "Bearer error=\"\($0)\"" } ?? "Bearer"
        return Response(status: status, headers: [("WWW-Authenticate", challenge)])
    }
}
