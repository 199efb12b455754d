public import Foundation

extension SignInWithTrifactor {
    /// What the token endpoint gave, with the ID token verified.
    public struct Tokens: Sendable, Equatable, Codable {
        /// The access token, for the resource servers the provider issued it for.
        public let accessToken: String
        /// When the access token expires, if the provider said (`expires_in`).
        public let expiresAt: Date?
        /// The refresh token, if one was issued: the newest, since the provider rotates them at each use.
        public let refreshToken: String?
        /// The scopes granted, if the provider said.
        public let scope: String?
        /// The verified ID token: who signed in, when, how (`level`, `methods`).
        public let idToken: IDToken
        /// `DPoP` when the access token is bound to the client's DPoP key (RFC 9449): it is used only with a proof
        /// of that key. `Bearer` (or nil, for tokens kept by an older version) otherwise.
        public var tokenType: String? = nil
        /// The RFC 9396 authorization details the user approved (a JSON array), when the request carried some.
        public var authorizationDetails: String? = nil
    }

    /// Exchanges the code of `request`'s callback (with its PKCE verifier) and verifies the ID token: signature,
    /// `iss`, `aud`, `azp`, `exp` (with the leeway), the request's `nonce` and its level.
    /// - Throws: `TrifactorError` `.authorizationRefused` (`invalid_grant`: the code was used, expired or not
    ///   this client's), `.idTokenRejected` naming the failed check, `.transport`, `.unexpectedResponse`.
    public func exchange(code: String, for request: Request) async throws(TrifactorError) -> Tokens {
        let json = try await token([
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", request.redirectURI.absoluteString),
            ("client_id", clientID), ("code_verifier", request.codeVerifier),
        ])
        guard let raw = json["id_token"] as? String else {
            throw .idTokenRejected("The provider sent no ID token.")
        }
        let idToken = try await verify(raw, nonce: request.nonce, minimum: request.minimumLevel)
        let tokens = try self.tokens(json, idToken: idToken, previousRefreshToken: nil)
        // RFC 9396 §7: the details granted come back with the token, the same as asked: a payment's token without
        // them, or with others, approved nothing this client asked for.
        if let asked = request.authorizationDetails,
            tokens.authorizationDetails == nil || tokens.authorizationDetails != Self.canonicalJSON(asked)
        {
            throw .idTokenRejected("The provider granted other authorization details than were asked for.")
        }
        return tokens
    }

    /// New tokens for `tokens`' refresh token. The provider rotates refresh tokens: the answer's replaces the old
    /// one (which the provider will refuse from now on, and whose reuse ends the whole grant). A new ID token, if
    /// sent, is verified and must name the same user.
    /// - Throws: `TrifactorError` `.invalidArgument` without a refresh token; `.authorizationRefused`
    ///   (`invalid_grant`: the grant ended; sign in again); `.idTokenRejected`; `.transport`.
    public func refresh(_ tokens: Tokens) async throws(TrifactorError) -> Tokens {
        guard let refreshToken = tokens.refreshToken else {
            throw .invalidArgument("These tokens came without a refresh token (ask for the offline_access scope).")
        }
        let json = try await token([
            ("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", clientID),
        ])
        var idToken = tokens.idToken
        if let raw = json["id_token"] as? String {
            idToken = try await verify(raw, nonce: nil, minimum: nil)
            guard idToken.subject == tokens.idToken.subject else {
                throw .idTokenRejected("The refreshed ID token names another user.")
            }
        }
        return try self.tokens(json, idToken: idToken, previousRefreshToken: refreshToken)
    }

    /// Verifies `raw` against the provider's keys, reading them again once when none fits (the provider rotated
    /// its keys since they were read).
    func verify(_ raw: String, nonce: String?, minimum: AuthenticationLevel?) async throws(TrifactorError) -> IDToken {
        let parts = try IDTokenVerifier.parts(raw)
        var signed = false
        if let keys = cache.withLock({ $0.keys }) { signed = verifier.isSigned(parts, by: keys) }
        if !signed {
            let keys = try await fetchKeys()
            signed = verifier.isSigned(parts, by: keys)
        }
        guard signed else { throw .idTokenRejected("The ID token's signature is not the provider's.") }
        return try verifier.claims(raw, parts, now: clock.now, nonce: nonce, minimum: minimum)
    }

    func fetchKeys() async throws(TrifactorError) -> JSONWebKeySet {
        let metadata = try await metadata()
        let response = try await send(HTTPRequest(method: "GET", url: metadata.jwksURI))
        guard response.status == 200, let keys = JSONWebKeySet(json: response.body) else {
            throw .unexpectedResponse(status: response.status)
        }
        let now = clock.now
        cache.withLock {
            $0.keys = keys
            $0.keysReadAt = now
        }
        return keys
    }

    /// Posts `fields` to the token endpoint; the answer's JSON, or the provider's OAuth error. A confidential
    /// client's assertion and DPoP proof are added here.
    func token(_ fields: [(String, String)]) async throws(TrifactorError) -> [String: Any] {
        try await post(fields, to: try await metadata().tokenEndpoint, expecting: 200)
    }

    /// Posts `fields` to `url` as a form and returns the JSON object of an answer with status `expecting`, or throws
    /// the provider's OAuth error. A confidential client authenticates with a fresh assertion and, holding a DPoP
    /// key, sends a proof (with `accessToken`'s hash when given); a `use_dpop_nonce` refusal is retried once with the
    /// nonce the provider gave (RFC 9449 §8).
    func post(_ fields: [(String, String)], to url: URL, expecting: Int, accessToken: String? = nil)
        async throws(TrifactorError) -> [String: Any]
    {
        var attempt = 0
        while true {
            attempt += 1
            var headers = ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"]
            var body = fields
            if credentials != nil {
                body.removeAll { $0.0 == "client_id" }
                body += try clientAuthentication()
                if let proof = try dpopProof(method: "POST", url: url, accessToken: accessToken) {
                    headers["DPoP"] = proof
                }
            }
            let response = try await send(
                HTTPRequest(method: "POST", url: url, headers: headers, body: Data(Self.formEncoded(body).utf8)))
            if let nonce = response.header("DPoP-Nonce") { cache.withLock { $0.dpopNonce = nonce } }
            let json = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any]
            if (400..<500).contains(response.status), let error = json?["error"] as? String {
                if error == "use_dpop_nonce", attempt == 1, response.header("DPoP-Nonce") != nil { continue }
                throw .authorizationRefused(
                    OAuthError(error: error, errorDescription: json?["error_description"] as? String))
            }
            guard response.status == expecting, let json else { throw .unexpectedResponse(status: response.status) }
            return json
        }
    }

    /// The tokens of a token endpoint's answer: a DPoP-bound token only to a client that holds a DPoP key.
    func tokens(_ json: [String: Any], idToken: IDToken, previousRefreshToken: String?) throws(TrifactorError)
        -> Tokens
    {
        let type = (json["token_type"] as? String)?.lowercased()
        // A client holding a DPoP key takes only tokens bound to it (RFC 9449 §5): a bearer token would travel alone.
        guard let access = json["access_token"] as? String, type == (credentials?.dpopKey != nil ? "dpop" : "bearer")
        else { throw .unexpectedResponse(status: 200) }
        let lifetime = (json["expires_in"] as? Int).map(TimeInterval.init) ?? (json["expires_in"] as? Double)
        var details: String?
        if let granted = json["authorization_details"] as? [Any],
            let data = try? JSONSerialization.data(withJSONObject: granted, options: [.sortedKeys])
        {
            details = String(decoding: data, as: UTF8.self)
        }
        return Tokens(
            accessToken: access, expiresAt: lifetime.map { clock.now.addingTimeInterval($0) },
            refreshToken: json["refresh_token"] as? String ?? previousRefreshToken, scope: json["scope"] as? String,
            idToken: idToken, tokenType: type == "dpop" ? "DPoP" : "Bearer", authorizationDetails: details)
    }

    /// `text` as compact JSON with sorted members, as the tokens' `authorizationDetails` are kept; nil when not JSON.
    static func canonicalJSON(_ text: String) -> String? {
        guard let value = try? JSONSerialization.jsonObject(with: Data(text.utf8)),
            let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys])
        else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// A JSON object fetched from `url`.
    func getJSON(_ url: URL) async throws(TrifactorError) -> [String: Any] {
        let response = try await send(HTTPRequest(method: "GET", url: url, headers: ["Accept": "application/json"]))
        guard response.status == 200,
            let json = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any]
        else { throw .unexpectedResponse(status: response.status) }
        return json
    }

    func send(_ request: HTTPRequest) async throws(TrifactorError) -> HTTPResponse {
        do {
            return try await transport.send(request)
        } catch let failure as TransportFailure {
            throw .transport(failure)
        } catch {
            throw .transport(TransportFailure(.other, host: request.url.host ?? "the provider"))
        }
    }
}
