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
        return try Self.tokens(json, idToken: idToken, previousRefreshToken: nil, now: clock.now)
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
        return try Self.tokens(json, idToken: idToken, previousRefreshToken: refreshToken, now: clock.now)
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

    private func fetchKeys() async throws(TrifactorError) -> JSONWebKeySet {
        let metadata = try await metadata()
        let response = try await send(HTTPRequest(method: "GET", url: metadata.jwksURI))
        guard response.status == 200, let keys = JSONWebKeySet(json: response.body) else {
            throw .unexpectedResponse(status: response.status)
        }
        cache.withLock { $0.keys = keys }
        return keys
    }

    /// Posts `fields` to the token endpoint; the answer's JSON, or the provider's OAuth error.
    func token(_ fields: [(String, String)]) async throws(TrifactorError) -> [String: Any] {
        let metadata = try await metadata()
        let response = try await send(
            HTTPRequest(
                method: "POST", url: metadata.tokenEndpoint,
                headers: ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"],
                body: Data(Self.formEncoded(fields).utf8)))
        let json = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any]
        if (400..<500).contains(response.status), let error = json?["error"] as? String {
            throw .authorizationRefused(
                OAuthError(error: error, errorDescription: json?["error_description"] as? String))
        }
        guard response.status == 200, let json else { throw .unexpectedResponse(status: response.status) }
        return json
    }

    static func tokens(_ json: [String: Any], idToken: IDToken, previousRefreshToken: String?, now: Date)
        throws(TrifactorError) -> Tokens
    {
        guard let access = json["access_token"] as? String,
            (json["token_type"] as? String)?.lowercased() == "bearer"
        else { throw .unexpectedResponse(status: 200) }
        let lifetime = (json["expires_in"] as? Int).map(TimeInterval.init) ?? (json["expires_in"] as? Double)
        return Tokens(
            accessToken: access, expiresAt: lifetime.map { now.addingTimeInterval($0) },
            refreshToken: json["refresh_token"] as? String ?? previousRefreshToken, scope: json["scope"] as? String,
            idToken: idToken)
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
