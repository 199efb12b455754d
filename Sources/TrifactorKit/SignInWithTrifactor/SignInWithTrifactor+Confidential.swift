public import Foundation

/// A P-256 key a confidential client signs JSON Web Tokens with (ES256): its `private_key_jwt` client assertions
/// (RFC 7523) and its DPoP proofs (RFC 9449). Keep it on the server that runs the client: whoever holds it is the
/// client. `SoftwareClientKey` in `TrifactorKitVault` is a key kept in a file.
public protocol ClientSigningKey: Sendable {
    /// The public point's `x` coordinate, base64url (RFC 7518 §6.2.1.2).
    var x: String { get }
    /// The public point's `y` coordinate, base64url (RFC 7518 §6.2.1.3).
    var y: String { get }
    /// The `kid` the client's registered JWK Set gives this key, sent in assertions' headers; nil to send none.
    var keyID: String? { get }
    /// An ES256 signature over `message`: R and S, 32 big-endian bytes each (JOSE's form, RFC 7518 §3.4).
    /// - Parameter message: the JWS signing input.
    func signES256(_ message: Data) throws -> Data
}

extension ClientSigningKey {
    /// The public key as a JWK (`kty`, `crv`, `x`, `y`, and `kid` when it has one), for the client's registered
    /// JWK Set.
    public var publicJWK: [String: String] {
        var jwk = ["kty": "EC", "crv": "P-256", "x": x, "y": y]
        if let keyID { jwk["kid"] = keyID }
        return jwk
    }

    /// The JSON whose SHA-256 is the key's RFC 7638 thumbprint: the required members, in order, without whitespace.
    public var thumbprintInput: String { #"{"crv":"P-256","kty":"EC","x":"\#(x)","y":"\#(y)"}"# }
}

extension SignInWithTrifactor {
    /// The keys of a confidential client: one for its assertions, and, for sender-constrained tokens, one for its
    /// DPoP proofs (FAPI 2.0 asks for both).
    public struct ClientCredentials: Sendable {
        /// Signs the client assertions (`private_key_jwt`); its public key is in the client's registered JWK Set.
        public let assertionKey: any ClientSigningKey
        /// Signs the DPoP proofs the tokens are bound to; nil: bearer tokens.
        public let dpopKey: (any ClientSigningKey)?

        /// - Parameters:
        ///   - assertionKey: signs the client assertions.
        ///   - dpopKey: signs the DPoP proofs; nil for bearer tokens.
        public init(assertionKey: any ClientSigningKey, dpopKey: (any ClientSigningKey)?) {
            self.assertionKey = assertionKey
            self.dpopKey = dpopKey
        }
    }

    /// A decoupled sign-in in progress (OpenID CIBA Core 1.0 §7.3): what to tell the user, and the id to poll with.
    public struct BackchannelAuthentication: Sendable, Equatable {
        /// The request's id (`auth_req_id`), polled with; never shown.
        public let requestID: String
        /// When the request stops waiting.
        public let expiresAt: Date
        /// Seconds between polls, at first.
        public let interval: TimeInterval
        /// The number the user picks on their device (Trifactor's `binding_number`), to tell them; nil when the
        /// provider gives none.
        public let bindingNumber: Int?
    }

    /// The RFC 7638 thumbprint of the DPoP key (base64url SHA-256 of its required members in order), as tokens
    /// bound to it carry in `cnf.jkt`; nil without a DPoP key.
    public var dpopThumbprint: String? {
        guard let key = credentials?.dpopKey else { return nil }
        return Base64URL.encode(crypto.sha256(Data(key.thumbprintInput.utf8)))
    }

    /// Pushes an authorization request (RFC 9126) as the confidential client and returns the request to send the
    /// browser to: the authorization endpoint with only `client_id` and the `request_uri` the provider gave. The
    /// code is bound to the DPoP key (`dpop_jkt`, RFC 9449 §10) when the client has one.
    /// - Parameters:
    ///   - level: the lowest level the client accepts (`acr_values`); a token below it is refused.
    ///   - prompt: what the sign-in page must ask.
    ///   - loginHint: the email address to fill in.
    ///   - authorizationDetails: RFC 9396 authorization details (a JSON array), such as a `payment_initiation`
    ///     the user approves with a factor bound to it.
    /// - Throws: `TrifactorError` `.invalidArgument` for a public client; `.providerMismatch` when the provider takes
    ///   no pushed requests; `.authorizationRefused` with the provider's error (`invalid_authorization_details`,
    ///   `invalid_client`, …); `.transport`; `.unexpectedResponse`.
    public func pushedAuthorizationRequest(
        level: AuthenticationLevel? = nil, prompt: Prompt? = nil, loginHint: String? = nil,
        authorizationDetails: String? = nil
    ) async throws(TrifactorError) -> Request {
        guard credentials != nil else {
            throw .invalidArgument("Only a confidential client (with ClientCredentials) pushes its requests.")
        }
        let metadata = try await metadata()
        guard let endpoint = metadata.pushedAuthorizationRequestEndpoint else {
            throw .providerMismatch("The provider does not take pushed authorization requests.")
        }
        let verifier = Base64URL.encode(crypto.randomBytes(32))
        let state = Base64URL.encode(crypto.randomBytes(16))
        let nonce = Base64URL.encode(crypto.randomBytes(16))
        var fields = [
            ("response_type", "code"), ("redirect_uri", redirectURI.absoluteString),
            ("scope", scopes.joined(separator: " ")), ("state", state), ("nonce", nonce),
            ("code_challenge", codeChallenge(for: verifier)), ("code_challenge_method", "S256"),
        ]
        if let level { fields.append(("acr_values", level.rawValue)) }
        if let prompt { fields.append(("prompt", prompt.rawValue)) }
        if let loginHint { fields.append(("login_hint", loginHint)) }
        if let authorizationDetails { fields.append(("authorization_details", authorizationDetails)) }
        if let dpopThumbprint { fields.append(("dpop_jkt", dpopThumbprint)) }
        let json = try await post(fields, to: endpoint, expecting: 201)
        guard let requestURI = json["request_uri"] as? String else { throw .unexpectedResponse(status: 201) }
        var components = URLComponents(url: metadata.authorizationEndpoint, resolvingAgainstBaseURL: false)!
        let query = Self.formEncoded([("client_id", clientID), ("request_uri", requestURI)])
        components.percentEncodedQuery = components.percentEncodedQuery.map { $0 + "&" + query } ?? query
        var request = Request(
            url: components.url!, state: state, nonce: nonce, codeVerifier: verifier, redirectURI: redirectURI,
            minimumLevel: level, issuerRequired: metadata.issuerInAuthorizationResponse)
        request.authorizationDetails = authorizationDetails
        return request
    }

    /// Spends the authorization details `tokens` carry, once, for `authorizationDetails` about to be carried out
    /// (`POST /authorization_details/consume` under the issuer): a second spend, or other details, is refused, and
    /// other details void the approval. Call it in the same step that carries out the payment, and carry it out
    /// only when it returns.
    /// - Parameters:
    ///   - tokens: tokens from an authorization that carried authorization details.
    ///   - authorizationDetails: the details about to be carried out (a JSON array; members in any order).
    /// - Throws: `TrifactorError` `.authorizationRefused` with `invalid_grant` (spent already, expired, revoked) or
    ///   `invalid_authorization_details` (other details: now void); `.invalidArgument` for a public client;
    ///   `.transport`; `.unexpectedResponse`.
    public func spend(_ tokens: Tokens, authorizationDetails: String) async throws(TrifactorError) {
        guard credentials != nil else {
            throw .invalidArgument("Only a confidential client (with ClientCredentials) spends approvals.")
        }
        var base = issuer.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        let json = try await post(
            [("token", tokens.accessToken), ("authorization_details", authorizationDetails)],
            to: URL(string: base + "/authorization_details/consume")!, expecting: 200,
            accessToken: tokens.tokenType == "DPoP" ? tokens.accessToken : nil)
        guard json["status"] as? String == "used" else { throw .unexpectedResponse(status: 200) }
    }

    /// Starts a decoupled sign-in (OpenID CIBA Core 1.0 §7.1): the provider asks the user named by `loginHint` on
    /// their own device, showing `bindingMessage`.
    /// - Parameters:
    ///   - loginHint: the user's email address. An address nobody has gets the same answer, and then expires.
    ///   - bindingMessage: up to 100 characters of plain text shown on the user's device, such as "Transfer EUR
    ///     250.00 to Erika Mustermann".
    ///   - level: the lowest level accepted (`acr_values`).
    ///   - requestedExpiry: seconds the request may wait (the provider keeps it within its bounds).
    /// - Throws: `TrifactorError` `.invalidArgument` for a public client; `.providerMismatch` when the provider offers
    ///   no CIBA; `.authorizationRefused` (`invalid_binding_message`, `unauthorized_client`, `slow_down`, …);
    ///   `.transport`; `.unexpectedResponse`.
    public func backchannelAuthentication(
        loginHint: String, bindingMessage: String, level: AuthenticationLevel? = nil,
        requestedExpiry: Int? = nil
    ) async throws(TrifactorError) -> BackchannelAuthentication {
        guard credentials != nil else {
            throw .invalidArgument("Only a confidential client (with ClientCredentials) starts decoupled sign-ins.")
        }
        guard let endpoint = try await metadata().backchannelAuthenticationEndpoint else {
            throw .providerMismatch("The provider does not offer decoupled sign-ins (CIBA).")
        }
        var fields = [
            ("scope", scopes.joined(separator: " ")), ("login_hint", loginHint), ("binding_message", bindingMessage),
        ]
        if let level { fields.append(("acr_values", level.rawValue)) }
        if let requestedExpiry { fields.append(("requested_expiry", String(requestedExpiry))) }
        let json = try await post(fields, to: endpoint, expecting: 200)
        guard let id = json["auth_req_id"] as? String, let expiresIn = json["expires_in"] as? Int else {
            throw .unexpectedResponse(status: 200)
        }
        return BackchannelAuthentication(
            requestID: id, expiresAt: clock.now.addingTimeInterval(TimeInterval(expiresIn)),
            // CIBA Core §7.3: 5 seconds when the provider names no interval.
            interval: TimeInterval(json["interval"] as? Int ?? 5), bindingNumber: json["binding_number"] as? Int)
    }

    /// Polls until the user decided on their device (CIBA Core §10.1, §11): every `interval` seconds, 5 more after
    /// each `slow_down`; then verifies the ID token (signature, `iss`, `aud`, `exp`, and the level asked for).
    /// - Parameters:
    ///   - authentication: what ``backchannelAuthentication(loginHint:bindingMessage:level:requestedExpiry:)``
    ///     answered.
    ///   - level: the level asked for, checked again in the ID token.
    ///   - sleep: waits the seconds given (replaceable in tests).
    /// - Throws: `TrifactorError` `.authorizationRefused` (`access_denied`: denied on the device, or the level was
    ///   not reached), `.expired`, `.cancelled`, `.idTokenRejected`, `.transport`.
    public func tokens(
        for authentication: BackchannelAuthentication, level: AuthenticationLevel? = nil,
        sleep: @Sendable (TimeInterval) async throws -> Void = { try await Task.sleep(for: .seconds($0)) }
    ) async throws(TrifactorError) -> Tokens {
        try await poll(
            [("grant_type", "urn:openid:params:grant-type:ciba"), ("auth_req_id", authentication.requestID)],
            interval: authentication.interval, expiresAt: authentication.expiresAt, minimum: level, sleep: sleep)
    }

    /// What one poll of a decoupled sign-in found.
    public enum BackchannelOutcome: Sendable {
        /// The user has not decided yet. `slowDown`: the provider found this poll too early (`slow_down`); poll 5 s
        /// less often from now on (CIBA Core §11).
        case pending(slowDown: Bool)
        /// The user approved on their device: the verified tokens.
        case approved(Tokens)
    }

    /// Polls a decoupled sign-in once (CIBA Core §10.1), for a server that shows its state on a page refreshed every
    /// `authentication.interval` seconds rather than waiting in a loop.
    /// - Parameters:
    ///   - authentication: what ``backchannelAuthentication(loginHint:bindingMessage:level:requestedExpiry:)``
    ///     answered.
    ///   - level: the level asked for, checked again in the ID token.
    /// - Throws: `TrifactorError` `.authorizationRefused` (`access_denied`: denied on the device, or the level was
    ///   not reached; `invalid_grant`: used already), `.expired`, `.idTokenRejected`, `.transport`.
    public func poll(_ authentication: BackchannelAuthentication, level: AuthenticationLevel? = nil)
        async throws(TrifactorError) -> BackchannelOutcome
    {
        guard clock.now < authentication.expiresAt else { throw .expired }
        let json: [String: Any]
        do {
            json = try await token([
                ("grant_type", "urn:openid:params:grant-type:ciba"), ("auth_req_id", authentication.requestID),
            ])
        } catch let error where error.code == .authorizationRefused {
            switch error.oauthError?.error {
            case "authorization_pending": return .pending(slowDown: false)
            case "slow_down": return .pending(slowDown: true)
            case "expired_token": throw .expired
            default: throw error
            }
        }
        guard let raw = json["id_token"] as? String else { throw .idTokenRejected("The provider sent no ID token.") }
        let idToken = try await verify(raw, nonce: nil, minimum: level)
        return .approved(try tokens(json, idToken: idToken, previousRefreshToken: nil))
    }

    /// The client authentication fields: `client_id` and a fresh `private_key_jwt` assertion (RFC 7523 §3): `iss`
    /// and `sub` the client, `aud` the issuer alone (FAPI 2.0 §5.3.2.1), a new `jti`, one minute of life.
    func clientAuthentication() throws(TrifactorError) -> [(String, String)] {
        guard let key = credentials?.assertionKey else { return [("client_id", clientID)] }
        let now = Int(clock.now.timeIntervalSince1970)
        var header = ["alg": "ES256", "typ": "JWT"]
        if let kid = key.keyID { header["kid"] = kid }
        let claims: [String: Any] = [
            "iss": clientID, "sub": clientID, "aud": issuer.absoluteString,
            "jti": Base64URL.encode(crypto.randomBytes(16)), "iat": now, "nbf": now, "exp": now + 60,
        ]
        return [
            ("client_id", clientID),
            ("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"),
            ("client_assertion", try Self.jws(header: header, claims: claims, key: key)),
        ]
    }

    /// A DPoP proof (RFC 9449 §4.2) for `method` on `url` (query and fragment left out, §4.3), with the access
    /// token's hash (`ath`) when one is presented and the provider's latest nonce; nil without a DPoP key.
    /// - Parameters:
    ///   - method: the request's method (`POST`, `GET`).
    ///   - url: the request's address.
    ///   - accessToken: the DPoP-bound access token the request presents, if any.
    /// - Throws: `TrifactorError` `.unexpectedResponse` when the key cannot sign.
    public func dpopProof(method: String, url: URL, accessToken: String? = nil) throws(TrifactorError) -> String? {
        guard let key = credentials?.dpopKey else { return nil }
        var target = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        target.query = nil
        target.fragment = nil
        let header: [String: Any] = [
            "typ": "dpop+jwt", "alg": "ES256", "jwk": ["kty": "EC", "crv": "P-256", "x": key.x, "y": key.y],
        ]
        var claims: [String: Any] = [
            "jti": Base64URL.encode(crypto.randomBytes(16)), "htm": method, "htu": target.url!.absoluteString,
            "iat": Int(clock.now.timeIntervalSince1970),
        ]
        if let accessToken { claims["ath"] = Base64URL.encode(crypto.sha256(Data(accessToken.utf8))) }
        if let nonce = cache.withLock({ $0.dpopNonce }) { claims["nonce"] = nonce }
        return try Self.jws(header: header, claims: claims, key: key)
    }

    /// A compact JWS of `claims` under `header`, signed by `key`.
    static func jws(header: [String: Any], claims: [String: Any], key: any ClientSigningKey) throws(TrifactorError)
        -> String
    {
        guard let head = try? JSONSerialization.data(withJSONObject: header, options: [.sortedKeys]),
            let body = try? JSONSerialization.data(
                withJSONObject: claims, options: [.sortedKeys, .withoutEscapingSlashes])
        else { throw .invalidArgument("The token's header or claims cannot be written as JSON.") }
        let input = Base64URL.encode(head) + "." + Base64URL.encode(body)
        guard let signature = try? key.signES256(Data(input.utf8)), signature.count == 64 else {
            throw .invalidArgument("The client's key could not sign (an ES256 signature is 64 bytes).")
        }
        return input + "." + Base64URL.encode(signature)
    }
}

extension SignInWithTrifactor {
    /// A verified logout token: whose session at the provider ended.
    public struct LogoutToken: Sendable, Equatable {
        /// The user (`sub`), when named.
        public let subject: String?
        /// The provider's session (`sid`), when named: end only the client's sessions of it.
        public let sessionID: String?
    }

    /// Verifies a logout token the provider posted to the client's back-channel logout URI (OpenID Connect
    /// Back-Channel Logout 1.0 §2.6): `typ` `logout+jwt` when given, the provider's signature, `iss`, `aud` naming
    /// this client, a recent `iat`, `exp` when given, a `jti`, the back-channel logout event, `sub` or `sid`, and no
    /// `nonce`. Replaying a token ends nothing more than it did. The keys are read again only for a `kid` not among
    /// them, at most once a minute, so forged tokens posted to the endpoint cannot make the client hammer the
    /// provider.
    /// - Parameter raw: the `logout_token` form field.
    /// - Throws: `TrifactorError` `.idTokenRejected` naming the failed check; `.transport` when the keys cannot be read.
    public func logoutToken(_ raw: String) async throws(TrifactorError) -> LogoutToken {
        let parts = try IDTokenVerifier.parts(raw)
        if let type = parts.type, type.lowercased() != "logout+jwt", type.lowercased() != "application/logout+jwt" {
            throw .idTokenRejected("The token is not a logout token (its typ).")
        }
        var signed = false
        let cached = cache.withLock { ($0.keys, $0.keysReadAt) }
        if let keys = cached.0 { signed = verifier.isSigned(parts, by: keys) }
        let unknownKey = cached.0.map { keys in !keys.keys.contains { $0.id == parts.keyID } } ?? true
        if !signed, unknownKey, cached.1.map({ clock.now.timeIntervalSince($0) >= 60 }) ?? true {
            signed = verifier.isSigned(parts, by: try await fetchKeys())
        }
        guard signed else { throw .idTokenRejected("The logout token's signature is not the provider's.") }
        let c = parts.claims
        let audiences: [String] =
            if let one = c["aud"] as? String { [one] } else { (c["aud"] as? [Any])?.compactMap { $0 as? String } ?? [] }
        guard c["iss"] as? String == issuer.absoluteString, audiences.contains(clientID) else {
            throw .idTokenRejected("The logout token is not for this client from this provider.")
        }
        let now = clock.now.timeIntervalSince1970
        guard let iat = (c["iat"] as? Int).map(TimeInterval.init) ?? (c["iat"] as? Double), abs(now - iat) <= 600
        else { throw .idTokenRejected("The logout token is not recent.") }
        if let exp = (c["exp"] as? Int).map(TimeInterval.init) ?? (c["exp"] as? Double), exp + 60 < now {
            throw .idTokenRejected("The logout token has expired.")
        }
        guard (c["jti"] as? String)?.isEmpty == false else {
            throw .idTokenRejected("The logout token has no jti.")
        }
        guard let events = c["events"] as? [String: Any],
            events["http://schemas.openid.net/event/backchannel-logout"] is [String: Any], c["nonce"] == nil
        else { throw .idTokenRejected("The token is not a logout token.") }
        let subject = c["sub"] as? String
        let sessionID = c["sid"] as? String
        guard subject != nil || sessionID != nil else {
            throw .idTokenRejected("The logout token names neither a user nor a session.")
        }
        return LogoutToken(subject: subject, sessionID: sessionID)
    }
}
