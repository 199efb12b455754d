import Core
import Crypto
import Foundation
import Store

/// Authorization requests from their arrival to their code: checks the
/// client and redirect URI, keeps the flow between the hosted pages,
/// decides the next page from the browser's session, records consent and
/// issues the code. Signing in itself is the same `SessionService` and
/// `SecondFactorService` the API uses.
struct FlowService: Sendable {
    let transactions: Transactions
    let clock: Clock
    let random: RandomSource
    let sessions: SessionService
    let secondFactors: SecondFactorService
    /// The subject of a valid ID token this server issued to `clientID`, expired or not; nil otherwise.
    let hintedSubject: @Sendable (_ token: String, _ clientID: String) -> String?
    /// Every authorization request must have been pushed first (RFC 9126 §5, `TRIFACTOR_OIDC_REQUIRE_PAR`).
    var requirePushedRequests = false
    /// Every client is held to FAPI 2.0 (`TRIFACTOR_OIDC_FAPI2`), not only those registered so.
    var fapi2Everywhere = false
    /// The operator's authorization details types, by name (RFC 9396 §2, `TRIFACTOR_OIDC_AUTHORIZATION_DETAILS_TYPES`).
    var detailsSchemas: [String: DetailsSchema] = [:]

    /// Whether `client` is held to the FAPI 2.0 Security Profile.
    func isFAPI2(_ client: OIDCClient) -> Bool { client.fapi2 || fapi2Everywhere }

    /// How long a flow may wait for the user, and a code for its client.
    static let flowLifetime: Int64 = 30 * 60 * 1000
    static let codeLifetime: Int64 = 60 * 1000
    /// How long a pushed request waits for its `request_uri` (RFC 9126 §2.2; FAPI 2.0 §5.3.2.2: under 600 s).
    static let pushedLifetime: Int64 = 60 * 1000
    /// RFC 9126 §2.2's URN prefix; the rest is 32 random bytes, base64url.
    static let requestURIPrefix = "urn:ietf:params:oauth:request_uri:"
    /// Pushed requests per client: 60 at once, then 10 a second (a client pushes one per sign-in); a public
    /// client (whose client_id anyone may send) per client and address, so a stranger cannot spend its budget.
    static let pushesPerClient = RateLimiter.Limit(burst: 60, rate: 10)
    /// The most pushed requests a client may have waiting at once (each lives a minute).
    static let pushedPerClient = 1_000
    /// The authorization request's parameters a push keeps (RFC 6749 §4.1.1, OIDC Core §3.1.2.1, RFC 7636,
    /// RFC 8707, RFC 9449 §10); others are ignored, as RFC 6749 §3.1 says of unknown parameters.
    static let pushedParameters: Set<String> = [
        "response_type", "client_id", "redirect_uri", "scope", "state", "nonce", "code_challenge",
        "code_challenge_method", "response_mode", "prompt", "max_age", "login_hint", "id_token_hint", "acr_values",
        "ui_locales", "resource", "dpop_jkt", "request", "request_uri", "registration", "claims", "display",
        "authorization_details",
    ]
    /// The most a pushed request's parameters may weigh together.
    static let pushedBytes = 16 * 1024

    /// How a request begins.
    enum Start {
        case flow(AuthorizationFlow, OIDCClient)
        /// The client or redirect URI cannot be trusted: an error page, never a redirect (RFC 6749 §4.1.2.1); the
        /// client's name when it is known.
        case errorPage(String, client: String? = nil, site: String? = nil, payment: Bool = false)
        /// A checked client and redirect URI: the error goes back there (through a page the user clicks on, for a
        /// self-registered client: RFC 9700 §4.11.2, no open redirector for whoever can register).
        case redirectError(AuthorizationError, ClientRedirect, client: OIDCClient)
    }

    /// New flows per client address: 30 at once, then one every 2 seconds (a person starts a handful; a script that
    /// fills the table with flows is slowed down).
    static let perIP = RateLimiter.Limit(burst: 30, rate: 0.5)

    /// Checks an authorization request and stores its flow.
    /// - Throws: `CommonFailure.rateLimited` when this address started too many flows.
    /// `own`: the request is one of this server's own pages' (`OwnPages`), the only way its built-in client starts.
    func start(_ parameters: [String: String], client audit: AuditContext, browser: String, own: Bool = false) throws
        -> Start
    {
        guard let clientID = parameters["client_id"], !clientID.isEmpty else {
            return .errorPage("The link that brought you here names no app (client_id is missing).")
        }
        guard own ? OwnPages.isBuiltIn(clientID) : OIDCClient.isValidID(clientID) || clientID.utf8.count == 22,
            let client = try transactions.read({ try ClientRepository.find(clientID, on: $0) })
        else { return .errorPage("The app that sent you here is not registered with this server.") }
        var parameters = parameters
        // An own page's request never passes through the browser: as good as pushed (RFC 9126 §1).
        var pushed = own
        if let reference = parameters["request_uri"], reference.hasPrefix(Self.requestURIPrefix) {
            // RFC 9126 §4: the pushed parameters are the request, and only they (others in the URL are ignored);
            // the reference is used once, by the client that pushed it, before it expires. Any other request_uri
            // (a request object to fetch, OIDC Core §6.2) is answered request_uri_not_supported by the parser.
            let taken = try takePushed(reference, clientID: client.id)
            guard case .parameters(let stored) = taken else {
                // A used payment link speaks of the payment it pushed, not of a sign-in.
                let payment = if case .spent(payment: true) = taken { true } else { false }
                return .errorPage(
                    payment
                        ? "This payment link has expired or was used already: go back to \(client.name) to see the payment or start it again."
                        : "This sign-in link has expired or was used already: go back to \(client.name) and start again.",
                    client: client.name,
                    // A self-registered client's name and site are anyone's choice: no button of this server's to it.
                    site: client.registeredBy == .dynamic ? nil : client.redirectURIs.first.flatMap(HostedPage.origin),
                    payment: payment)
            }
            parameters = stored
            pushed = true
        }
        guard let redirectURI = parameters["redirect_uri"] else {
            return .errorPage(
                "\(client.name) did not say where to return (redirect_uri is missing).", client: client.name)
        }
        guard RedirectURI.matches(redirectURI, registered: client.redirectURIs) else {
            return .errorPage(
                "\(client.name) asked to return to an address it has not registered, so this server will not send you there.",
                client: client.name)
        }
        let back = ClientRedirect(
            uri: redirectURI, mode: parameters["response_mode"] == "form_post" ? .formPost : .query,
            state: parameters["state"])
        // FAPI 2.0 §5.3.2.2 3: a FAPI client's requests are pushed, always.
        if (requirePushedRequests || isFAPI2(client)) && !pushed {
            return .redirectError(
                .invalidRequest(
                    "This server takes only pushed authorization requests (RFC 9126): POST the request to the pushed_authorization_request_endpoint, then send its request_uri."
                ), back, client: client)
        }
        var request: AuthorizationRequest
        do {
            request = try AuthorizationRequest.parse(
                parameters, client: client, redirectURI: redirectURI, schemas: detailsSchemas)
        } catch {
            return .redirectError(error, back, client: client)
        }
        if let hint = parameters["id_token_hint"] {
            // OIDC Core §3.1.2.1: a hint this server did not issue to this client is refused.
            guard let subject = hintedSubject(hint, client.id) else {
                return .redirectError(
                    .invalidRequest("id_token_hint is not an ID token issued to this client."), back, client: client)
            }
            request.hintedSubject = subject
        }
        let now = clock.now().millis
        var progress = AuthorizationFlow.Progress()
        progress.browser = SHA256.hex(browser)
        let flow = AuthorizationFlow(
            id: Base64URL.encode(random.bytes(32)), request: request, progress: progress, createdAt: now,
            expiresAt: now + Self.flowLifetime)
        try transactions.write { db in
            if let wait = try RateLimiter.take(
                "authorize:ip:\(audit.clientKey)", limit: Self.perIP, nowMillis: now, on: db)
            {
                throw CommonFailure.rateLimited(retryAfter: wait)
            }
            try FlowRepository.insert(flow, on: db)
        }
        return .flow(flow, client)
    }

    /// RFC 9126 §2: checks a request an authenticated client pushes, as the authorization endpoint would check it,
    /// and keeps it for a minute under a `request_uri` of 256 random bits.
    /// - Returns: the `request_uri` and its lifetime in seconds.
    /// - Throws: `OAuthError` in the token endpoint's form (§2.3), with the authorization endpoint's codes.
    func push(_ pushed: [String: String], client: OIDCClient, audit: AuditContext) throws -> (
        requestURI: String, expiresIn: Int
    ) {
        var parameters = pushed.filter { Self.pushedParameters.contains($0.key) }
        // Measured as it would be stored (escapes included), before anything else is read.
        guard try JSONEncoder().encode(parameters).count <= Self.pushedBytes else {
            throw OAuthError.invalidRequest("The pushed request is larger than \(Self.pushedBytes / 1024) KiB.")
        }
        // §2.1: request_uri cannot be pushed; a client_id, when sent, is the authenticated client's.
        if parameters["request_uri"] != nil { throw OAuthError.invalidRequest("request_uri cannot be pushed.") }
        if let named = parameters["client_id"], named != client.id {
            throw OAuthError.invalidRequest("client_id is not the authenticated client.")
        }
        parameters["client_id"] = client.id
        guard let redirectURI = parameters["redirect_uri"] else {
            throw OAuthError.invalidRequest("redirect_uri is required.")
        }
        // §2.4 allows unregistered redirect URIs for some clients: this server accepts registered ones only.
        guard RedirectURI.matches(redirectURI, registered: client.redirectURIs) else {
            throw OAuthError.invalidRequest("redirect_uri is not registered for this client.")
        }
        do {
            _ = try AuthorizationRequest.parse(
                parameters, client: client, redirectURI: redirectURI, schemas: detailsSchemas)
        } catch {
            throw OAuthError(error)
        }
        // FAPI 2.0 §5.3.2.2 5: PKCE with S256 of every client, confidential ones too (parse checked the method).
        if isFAPI2(client) && parameters["code_challenge"] == nil {
            throw OAuthError.invalidRequest("code_challenge is required: a FAPI 2.0 client uses PKCE with S256.")
        }
        if let hint = parameters["id_token_hint"], hintedSubject(hint, client.id) == nil {
            throw OAuthError.invalidRequest("id_token_hint is not an ID token issued to this client.")
        }
        let secret = Base64URL.encode(random.bytes(32))
        let now = clock.now().millis
        let json = String(decoding: try JSONEncoder().encode(parameters), as: UTF8.self)
        // A public client's pushes are counted per address too: anyone may make them.
        let origin = client.isPublic ? audit.clientKey : nil
        let bucket = origin.map { "par:client:\(client.id):\($0)" } ?? "par:client:\(client.id)"
        try transactions.write { db in
            if let wait = try RateLimiter.take(bucket, limit: Self.pushesPerClient, nowMillis: now, on: db) {
                throw OAuthError(
                    code: "temporarily_unavailable", description: "Too many pushed requests: try again in \(wait) s.",
                    status: 429, retryAfter: wait)
            }
            guard
                try PushedRequestRepository.waiting(clientID: client.id, origin: origin, now: now, on: db)
                    < Self.pushedPerClient
            else {
                throw OAuthError(
                    code: "temporarily_unavailable",
                    description:
                        "This client has \(Self.pushedPerClient) pushed requests waiting: try again in a minute.",
                    status: 429, retryAfter: 60)
            }
            try PushedRequestRepository.insert(
                id: SHA256.hex(secret), clientID: client.id, origin: origin, json: json,
                expiresAt: now + Self.pushedLifetime, on: db)
        }
        return (Self.requestURIPrefix + secret, Int(Self.pushedLifetime / 1000))
    }

    /// The parameters pushed under `reference` by `clientID`, taken (one use); nil when there are none to take.
    private func takePushed(_ reference: String, clientID: String) throws -> PushedRequestRepository.Taken {
        let secret = reference.dropFirst(Self.requestURIPrefix.count)
        guard secret.utf8.count == 43 else { return .unknown }
        let now = clock.now().millis
        return try transactions.write {
            try PushedRequestRepository.take(id: SHA256.hex(String(secret)), clientID: clientID, now: now, on: $0)
        }
    }

    /// A flow still waiting for the user, with its client.
    func open(_ id: String?) throws -> (AuthorizationFlow, OIDCClient)? {
        guard let id, SessionToken.isWellFormed(id) else { return nil }
        let now = clock.now().millis
        return try transactions.read { db in
            guard let flow = try FlowRepository.open(id, now: now, on: db),
                let client = try ClientRepository.find(flow.request.clientID, on: db)
            else { return nil }
            return (flow, client)
        }
    }

    func save(_ flow: AuthorizationFlow) throws { try transactions.write { try FlowRepository.save(flow, on: $0) } }

    /// Ends the flow: its client was answered without a code, so no page of it may go on to give one.
    func end(_ id: String) throws { try transactions.write { try FlowRepository.end(id, on: $0) } }

    /// The browser's session as the flow needs it; nil when the cookie holds none that is live.
    func session(token: String?, client audit: AuditContext) throws -> (Caller, AuthorizationFlow.Session)? {
        guard let token else { return nil }
        let caller: Caller
        do {
            caller = try sessions.authenticate(token: token, client: audit)
        } catch CommonFailure.unauthenticated, CommonFailure.sessionExpired {
            return nil
        }
        let s = caller.session
        let factors = try transactions.read { try FactorRepository.list(caller.user.id, on: $0) }
        let hasHardware = factors.contains { f in
            if f.kind == .passkey { return true }
            if case .device(let keys) = f.credential { return keys.approval != nil }
            return false
        }
        return (
            caller,
            AuthorizationFlow.Session(
                userID: caller.user.id.raw, sessionID: s.id.raw, level: Self.level(of: s),
                authTime: Self.authTime(of: s), hasSecondFactor: factors.contains { $0.kind.isStandalone },
                hasHardwareKey: hasHardware)
        )
    }

    /// The step the browser takes next.
    func next(_ flow: AuthorizationFlow, client: OIDCClient, session: AuthorizationFlow.Session?) throws
        -> AuthorizationFlow.Next
    {
        // A first-party client needs no consent (only prompt=consent asks, and it is recorded in the flow).
        let consented =
            try client.firstParty
            ? nil
            : session.map { s in
                try transactions.read { db in
                    try ConsentRepository.covers(
                        userID: s.userID, clientID: client.id, scopes: flow.request.scopes, on: db)
                }
            }
        return flow.next(
            session: session, consented: consented ?? false, firstParty: client.firstParty, now: clock.now().millis)
    }

    /// Records the user's agreement to the client's scopes.
    func consent(_ flow: AuthorizationFlow, session: AuthorizationFlow.Session, client audit: AuditContext) throws {
        let now = clock.now().millis
        var flow = flow
        flow.progress.consentedHere = true
        try transactions.write { db in
            try ConsentRepository.grant(
                userID: session.userID, clientID: flow.request.clientID, scopes: flow.request.scopes, at: now, on: db)
            try FlowRepository.save(flow, on: db)
            try AuditLog.append(
                audit.event(
                    .oidcConsentGranted, .success, userID: UserID(session.userID),
                    detail: "client=\(flow.request.clientID) scope=\(flow.request.scopes.joined(separator: "+"))"),
                at: now, on: db)
        }
    }

    /// Issues the flow's code (shown once, stored as SHA-256); nil when the flow no longer waits for one.
    /// `saving`: the flow's progress is saved in the same transaction.
    func issueCode(
        _ flow: AuthorizationFlow, session: AuthorizationFlow.Session, saving: Bool = false,
        client audit: AuditContext
    ) throws -> String? {
        let now = clock.now().millis
        let code = Base64URL.encode(random.bytes(32))
        let issued = try transactions.write { db -> Bool in
            if saving { try FlowRepository.save(flow, on: db) }
            guard
                try FlowRepository.issueCode(
                    flow.id, codeHash: SHA256.hex(code), expiresAt: now + Self.codeLifetime, userID: session.userID,
                    sessionID: session.sessionID, on: db)
            else { return false }
            try AuditLog.append(
                audit.event(
                    .oidcCodeIssued, .success, userID: UserID(session.userID),
                    detail: "client=\(flow.request.clientID) acr=\(session.level.rawValue)"), at: now, on: db)
            return true
        }
        return issued ? code : nil
    }

    /// The session's level of proof.
    static func level(of s: SessionRecord) -> ACR {
        guard s.aal >= .aal2 else { return .password }
        guard s.methods.contains(.hwk) else { return .mfa }
        // A passkey always verifies the user; a device key only when its approval key released it.
        let verified: Set<AuthMethod> = [.user, .face, .fpt, .iris, .pin]
        return s.deviceID == nil || s.methods.contains(where: verified.contains) ? .hardwareKey : .mfa
    }

    /// When the user last proved who they are (OIDC Core `auth_time`, in ms).
    static func authTime(of s: SessionRecord) -> Int64 {
        max(s.createdAt, s.passwordVerifiedAt ?? 0, s.mfaVerifiedAt ?? 0)
    }
}

/// Where and how an answer goes back to the client.
struct ClientRedirect: Sendable, Equatable {
    let uri: String
    let mode: AuthorizationRequest.ResponseMode
    let state: String?
}
