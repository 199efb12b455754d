public import Foundation

extension SignInWithTrifactor {
    /// A device's sign-in in progress (OAuth 2.0 Device Authorization Grant, RFC 8628): what to show the user, and
    /// the device code to poll with. Holds the device code: keep it like a secret.
    public struct DeviceAuthorization: Sendable, Equatable {
        /// The code the device polls with (never shown).
        public let deviceCode: String
        /// The code the user types (`BCDF-GHJK`).
        public let userCode: String
        /// Where the user types it.
        public let verificationURI: URL
        /// The same address with the code in it, for a QR code or a link (the page fills the code in).
        public let verificationURIComplete: URL?
        /// When the codes stop working.
        public let expiresAt: Date
        /// Seconds to leave between polls, at first.
        public let interval: TimeInterval
    }

    /// A value for a device's sign-in only (RFC 8628): no redirect URI is ever used.
    /// - Parameters: as `init(issuer:clientID:redirectURI:scopes:crypto:transport:clock:leeway:)`; the client is
    ///   registered with the grant `urn:ietf:params:oauth:grant-type:device_code`.
    public convenience init(
        deviceOf issuer: URL, clientID: String, scopes: [String] = ["openid"], crypto: any TokenCrypto,
        transport: any HTTPTransport = URLSessionTransport(), clock: any TrifactorClock = SystemClock()
    ) {
        self.init(
            issuer: issuer, clientID: clientID, redirectURI: issuer, scopes: scopes, crypto: crypto,
            transport: transport, clock: clock)
    }

    /// Asks the provider for a device code and a user code (RFC 8628 §3.1), as a public client.
    /// - Throws: `TrifactorError` `.providerMismatch` when the provider offers no device authorization endpoint,
    ///   `.authorizationRefused` (`unauthorized_client`: the client lacks the grant; `invalid_scope`),
    ///   `.transport`, `.unexpectedResponse`.
    public func deviceAuthorization() async throws(TrifactorError) -> DeviceAuthorization {
        guard let endpoint = try await metadata().deviceAuthorizationEndpoint else {
            throw .providerMismatch("The provider does not offer the device authorization grant.")
        }
        let response = try await send(
            HTTPRequest(
                method: "POST", url: endpoint,
                headers: ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"],
                body: Data(Self.formEncoded([("client_id", clientID), ("scope", scopes.joined(separator: " "))]).utf8)))
        let json = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any]
        if (400..<500).contains(response.status), let error = json?["error"] as? String {
            throw .authorizationRefused(
                OAuthError(error: error, errorDescription: json?["error_description"] as? String))
        }
        guard response.status == 200, let json, let deviceCode = json["device_code"] as? String,
            let userCode = json["user_code"] as? String,
            let uri = (json["verification_uri"] as? String).flatMap(URL.init(string:)),
            let expiresIn = json["expires_in"] as? Int
        else { throw .unexpectedResponse(status: response.status) }
        return DeviceAuthorization(
            deviceCode: deviceCode, userCode: userCode, verificationURI: uri,
            verificationURIComplete: (json["verification_uri_complete"] as? String).flatMap(URL.init(string:)),
            expiresAt: clock.now.addingTimeInterval(TimeInterval(expiresIn)),
            // §3.2: 5 seconds when the provider names no interval.
            interval: TimeInterval(json["interval"] as? Int ?? 5))
    }

    /// Polls the token endpoint until the user decided (RFC 8628 §3.4, §3.5): every `interval` seconds, 5 more
    /// after each `slow_down`; then verifies the ID token as a sign-in's (signature, `iss`, `aud`, `azp`, `exp`).
    /// - Parameters:
    ///   - authorization: what ``deviceAuthorization()`` answered.
    ///   - sleep: waits the seconds given (replaceable in tests).
    /// - Throws: `TrifactorError` `.authorizationRefused` (`access_denied`: the user denied), `.expired` (the codes
    ///   ran out of time, `expired_token`), `.cancelled` (the task was cancelled), `.idTokenRejected`, `.transport`.
    public func tokens(
        for authorization: DeviceAuthorization,
        sleep: @Sendable (TimeInterval) async throws -> Void = { try await Task.sleep(for: .seconds($0)) }
    ) async throws(TrifactorError) -> Tokens {
        try await poll(
            [
                ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
                ("device_code", authorization.deviceCode), ("client_id", clientID),
            ], interval: authorization.interval, expiresAt: authorization.expiresAt, sleep: sleep)
    }

    /// Polls the token endpoint with `fields` until the user decided: every `interval` seconds, 5 more after each
    /// `slow_down` (RFC 8628 §3.5, CIBA Core §11); then verifies the ID token as a sign-in's.
    func poll(
        _ fields: [(String, String)], interval start: TimeInterval, expiresAt: Date,
        minimum: AuthenticationLevel? = nil, sleep: @Sendable (TimeInterval) async throws -> Void
    ) async throws(TrifactorError) -> Tokens {
        var interval = start
        while true {
            do { try await sleep(interval) } catch { throw .cancelled }
            guard clock.now < expiresAt else { throw .expired }
            let json: [String: Any]
            do {
                json = try await token(fields)
            } catch let error where error.code == .authorizationRefused {
                switch error.oauthError?.error {
                case "authorization_pending": continue
                case "slow_down":
                    interval += 5
                    continue
                case "expired_token": throw .expired
                default: throw error
                }
            }
            guard let raw = json["id_token"] as? String else {
                throw .idTokenRejected("The provider sent no ID token.")
            }
            let idToken = try await verify(raw, nonce: nil, minimum: minimum)
            return try tokens(json, idToken: idToken, previousRefreshToken: nil)
        }
    }
}
