@_exported import API
public import Foundation

/// A client of one Trifactor server: a value, not a singleton, so an app may
/// hold several (two servers, two profiles) and a test builds its own.
/// Its session token lives in the injected `SecretStore`, under the profile's
/// name, so a new client value (an app restart) finds it again.
///
/// ```swift
/// let client = TrifactorClient(server: URL(string: "https://auth.example.com")!, secrets: keychain)
/// switch try await client.signIn(email: email, password: password) {
/// case .signedIn(let session): show(session)
/// case .secondFactorRequired(let resolver): askForSecondFactor(resolver)
/// }
/// ```
public struct TrifactorClient: Sendable {
    /// The server's base URL.
    public let server: URL
    /// The profile: the name the session token is stored under.
    public let profile: String
    var connection: Connection
    let clock: any TrifactorClock
    let secrets: any SecretStore

    /// - Parameters:
    ///   - server: the server's base URL (`https://auth.example.com`).
    ///   - transport: how requests travel; `URLSessionTransport` by default.
    ///   - clock: the time, for expiries and approvals.
    ///   - secrets: where the session token is kept: `KeychainSecretStore` on Apple platforms, `VaultSecretStore` on Linux,
    ///     `MemorySecretStore` for a process that signs in per run (the choice is explicit: no store silently forgets).
    ///   - profile: the token's name in `secrets`, for several accounts on one device.
    ///   - userAgent: what the user's session list shows for this client.
    public init(
        server: URL, transport: any HTTPTransport = URLSessionTransport(), clock: any TrifactorClock = SystemClock(),
        secrets: any SecretStore, profile: String = "default", userAgent: String = "TrifactorKit/1"
    ) {
        self.server = server
        self.profile = profile
        self.clock = clock
        self.secrets = secrets
        connection = Connection(server: server, transport: transport, userAgent: userAgent)
    }

    var tokenKey: String { "\(profile).session-token" }

    /// This client as a backend-for-frontend speaking for one browser request:
    /// every call carries `X-Forwarded-For: clientAddress` and
    /// `X-Forwarded-User-Agent: userAgent`, which trifactord takes only from a
    /// peer in its `TRIFACTOR_TRUSTED_PROXIES` (for its rate limits, audit log,
    /// session list and push screens).
    /// `traceParent` (a W3C `traceparent`, version 00) joins trifactord's log
    /// lines for these calls to the caller's trace. `brand` (`X-Trifactor-Brand`,
    /// taken from trusted proxies only; 1 to 32 letters, digits, spaces and
    /// `&'.-`) is the relying party's name on the texts, calls, emails and
    /// authenticator-app entries these calls cause.
    public func forwarding(clientAddress: String, userAgent: String?, traceParent: String? = nil, brand: String? = nil)
        -> TrifactorClient
    {
        var copy = self
        copy.connection.forwarded = ["X-Forwarded-For": clientAddress]
        // The relying party's name on its customers' texts, calls, emails and authenticator-app entries.
        if let brand { copy.connection.forwarded["X-Trifactor-Brand"] = brand }
        if let userAgent { copy.connection.forwarded["X-Forwarded-User-Agent"] = String(userAgent.prefix(512)) }
        // What the server takes (W3C: lower-case hex only); anything else would only be dropped there.
        if let traceParent, traceParent.utf8.count == 55,
            traceParent.utf8.allSatisfy({
                (0x30...0x39).contains($0) || (0x61...0x66).contains($0) || $0 == UInt8(ascii: "-")
            })
        {
            copy.connection.forwarded["traceparent"] = traceParent
        }
        return copy
    }

    // MARK: Accounts

    /// Creates an account; a code goes to `email`, in the language of `locale` (`de-de`; the
    /// server's default when nil). The answer is the same for a registered email.
    /// - Throws: `TrifactorError.server` `invalid_fields` (weak password, bad email, a language without messages), `rate_limited`.
    public func signUp(email: String, password: String, displayName: String? = nil, locale: String? = nil)
        async throws(TrifactorError)
    {
        _ = try await connection.raw(
            "POST", "/v1/accounts",
            body: CreateAccountRequest(
                email: email, password: password, displayName: displayName,
                locale: locale))
    }

    /// Sets the language of the signed-in user's texts, calls and emails (nil: the server's default); returns the account.
    /// - Throws: `TrifactorError.server` `invalid_fields` for a language Trifactor has no messages in.
    public func setLanguage(_ locale: String?) async throws(TrifactorError) -> UserInfo {
        try await authorized { token throws(TrifactorError) in
            try await connection.call("PATCH", "/v1/account", body: UpdateAccountRequest(locale: locale), token: token)
        }
    }

    /// Verifies `email` with the code it received.
    /// - Throws: `TrifactorError.server` `invalid_code`.
    public func verifyEmail(_ email: String, code: String) async throws(TrifactorError) {
        _ = try await connection.raw(
            "POST", "/v1/accounts/verify-email", body: VerifyEmailRequest(email: email, code: code))
    }

    /// Sends a new verification code to `email` (if it awaits one).
    public func resendVerification(to email: String) async throws(TrifactorError) {
        _ = try await connection.raw(
            "POST", "/v1/accounts/verify-email/resend", body: ResendVerificationRequest(email: email), repeatable: true)
    }

    /// Changes the password (the current one again; a second factor within the last 5 minutes when the user has one:
    /// step up first). Every other session ends.
    /// - Throws: `TrifactorError.server` `second_factor_required`, `invalid_fields` (`current_password`, `new_password`), `rate_limited`.
    public func changePassword(current: String, new replacement: String) async throws(TrifactorError) {
        let request = ChangePasswordRequest(currentPassword: current, newPassword: replacement)
        try await authorized { token throws(TrifactorError) in
            _ = try await connection.raw("POST", "/v1/account/password", body: request, token: token)
        }
    }

    // MARK: Sessions

    /// Signs in with a password. A user with second factors gets a resolver, not a session.
    /// - Throws: `TrifactorError.server` `invalid_credentials`, `too_many_attempts` (with `retryAfter`), `rate_limited`.
    public func signIn(email: String, password: String) async throws(TrifactorError) -> SignInResult {
        let response = try await connection.raw(
            "POST", "/v1/sessions", body: CreateSessionRequest(email: email, password: password))
        if response.status == 201 {
            return .signedIn(try await adopt(try decode(SessionCreated.self, response)))
        }
        let required = try decode(MFARequired.self, response)
        return .secondFactorRequired(SecondFactorResolver(client: self, required: required))
    }

    /// Starts a passwordless sign-in approved on the user's device: show `number`, then `await` its `session()`.
    /// Every address gets the same answer; one without a device simply never gets approved.
    public func signInWithPush(email: String) async throws(TrifactorError) -> PushSignIn {
        let started: PushSignInStarted = try await connection.call(
            "POST", "/v1/sessions/push", body: PushSignInRequest(email: email))
        return PushSignIn(client: self, started: started)
    }

    /// The signed-in user and session, as the server sees them now.
    /// - Throws: `.notSignedIn`, or `TrifactorError.server` `unauthenticated` / `session_expired` (the stored token is then forgotten).
    public func currentSession() async throws(TrifactorError) -> CurrentSession {
        try await authorized { token throws(TrifactorError) in
            try await connection.call("GET", "/v1/session", token: token)
        }
    }

    /// Whether a session token is stored (no request is made, no prompt shown).
    /// - Throws: `.secretStore` when the store cannot say (a damaged vault), never "no" for "cannot tell".
    public func hasSession() async throws(TrifactorError) -> Bool {
        do { return try await secrets.contains(tokenKey) } catch { throw .secretStore(error) }
    }

    /// Ends the session on the server and forgets its token; without a session it does nothing.
    /// The token is forgotten even when the server cannot be reached (the error then says so:
    /// the session ends on the server at its idle timeout).
    public func signOut() async throws(TrifactorError) {
        guard let token = try await storedToken() else { return }
        var failure: TrifactorError?
        do {
            _ = try await connection.raw("DELETE", "/v1/session", token: token)
        } catch let error where [.unauthenticated, .sessionExpired].contains(error.problem?.code) {
            // Ended already: forgetting the token is all that is left.
        } catch {
            failure = error
        }
        try await forgetToken()
        if let failure { throw failure }
    }

    /// The user's live sessions, newest first (this one marked `current`),
    /// every page of them (the server keeps at most its session limit, 50
    /// by default).
    public func sessions() async throws(TrifactorError) -> [SessionSummary] {
        var all: [SessionSummary] = []
        var after: String?
        repeat {
            let page = try await sessions(after: after, limit: 100)
            all += page.sessions
            // A server that repeats its cursor would never finish.
            guard page.next != after else { break }
            after = page.next
        } while after != nil
        return all
    }

    /// One page of the user's live sessions, newest first: `limit` (1 to 100)
    /// at most, after the `next` of the previous page.
    public func sessions(after: String?, limit: Int = 50) async throws(TrifactorError) -> SessionList {
        let query =
            [URLQueryItem(name: "limit", value: String(limit))]
            + (after.map { [URLQueryItem(name: "after", value: $0)] } ?? [])
        return try await authorized { token throws(TrifactorError) in
            try await connection.call("GET", "/v1/sessions", query: query, token: token, as: SessionList.self)
        }
    }

    /// Ends one of the user's sessions.
    public func revokeSession(_ id: String) async throws(TrifactorError) {
        try await authorized { token throws(TrifactorError) in
            _ = try await connection.raw("DELETE", "/v1/sessions/\(Self.segment(id))", token: token)
        }
    }

    // MARK: Internals

    /// Stores a new session's token and returns the session.
    func adopt(_ created: SessionCreated) async throws(TrifactorError) -> SessionInfo {
        do {
            try await secrets.set(Data(created.token.utf8), for: tokenKey, protection: .afterFirstUnlockThisDeviceOnly)
        } catch {
            throw .secretStore(error)
        }
        return created.session
    }

    func storedToken() async throws(TrifactorError) -> String? {
        do { return try await secrets.get(tokenKey, prompt: nil).map { String(decoding: $0, as: UTF8.self) } } catch {
            throw .secretStore(error)
        }
    }

    func forgetToken() async throws(TrifactorError) {
        do { try await secrets.remove(tokenKey) } catch { throw .secretStore(error) }
    }

    /// Runs `body` with the stored token; a token the server no longer knows is forgotten.
    func authorized<T>(_ body: (String) async throws(TrifactorError) -> T) async throws(TrifactorError) -> T {
        guard let token = try await storedToken() else { throw .notSignedIn }
        do {
            return try await body(token)
        } catch let error where [.unauthenticated, .sessionExpired].contains(error.problem?.code) {
            try? await forgetToken()
            throw error
        }
    }

    func decode<T: Decodable>(_ type: T.Type, _ response: HTTPResponse) throws(TrifactorError) -> T {
        guard response.header("content-type")?.hasPrefix("application/json") == true,
            let value = try? WireJSON.sharedDecoder.decode(T.self, from: response.body)
        else { throw .unexpectedResponse(status: response.status) }
        return value
    }

    /// An id made safe as one path segment.
    static func segment(_ id: String) -> String {
        id.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-_."))) ?? ""
    }
}
