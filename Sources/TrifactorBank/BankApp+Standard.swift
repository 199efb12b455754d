package import Foundation
import HTTP
import Logging
import Store
package import TrifactorKit
import WebUI

/// Trifactor Bank on the standard path: with a client registered at trifactord (`Configuration.standard`), the bank
/// signs its customers in as a FAPI 2.0 client of Trifactor's OpenID Provider: a pushed request (RFC 9126) with PKCE,
/// authenticated by `private_key_jwt`, answered on Trifactor's hosted sign-in (the customer's sitekey, password and
/// second factor are Trifactor's pages), the code exchanged for tokens bound to the bank's DPoP key. Its transfers are
/// payment authorization details (RFC 9396) the customer approves on Trifactor's payment page with a factor bound to
/// them, spent once by the bank just before its ledger moves. The tokens stay in this process; the browser holds the
/// bank's session cookie alone. Trifactor tells the bank when the customer signs out elsewhere (back-channel logout).
extension BankApp {
    /// The bank's client at trifactord.
    package struct StandardClient: Sendable {
        /// Its `client_id` (registered with `--fapi2 --auth-method private_key_jwt`).
        package var clientID: String
        /// trifactord's issuer, exactly as its metadata names it.
        package var issuer: URL
        /// The keys its assertions and DPoP proofs are signed with.
        package var credentials: SignInWithTrifactor.ClientCredentials
        /// The callback addresses registered with the client, one per address the bank is reached at
        /// (`http://localhost:8090/signin/callback`): the one of the browser's own host is used, so the session cookie
        /// comes back with the code.
        package var redirectURIs: [URL]

        package init(
            clientID: String, issuer: URL, credentials: SignInWithTrifactor.ClientCredentials, redirectURIs: [URL]
        ) {
            self.clientID = clientID
            self.issuer = issuer
            self.credentials = credentials
            self.redirectURIs = redirectURIs
        }
    }

    /// The routes of the standard path (with a client configured): each HTTP method and path, and its handler.
    func addStandard(_ router: inout Router) {
        guard configuration.standard != nil else { return }
        route(&router, "POST", "/signin/trifactor", startStandardSignIn)
        route(&router, "GET", "/signin/callback", standardCallback)
        route(&router, "POST", "/transfer/approve-at-trifactor", startStandardTransfer)
        route(&router, "POST", "/confirm/trifactor", confirmAtTrifactor)
        router.add("POST", "/backchannel-logout", backchannelLogout)
    }

    /// The client for the browser's host: the redirect URI on the host the browser reached the bank at (so its cookie
    /// comes back), else the first registered.
    func standardClient(_ request: Request) -> SignInWithTrifactor? {
        guard let clients = standardClients else { return nil }
        let host = request.header("host")?.lowercased() ?? ""
        return clients.first { $0.redirectURI.hostAndPort == host } ?? clients.first
    }

    /// `POST /signin/trifactor`: pushes a sign-in request to Trifactor and sends the browser to its hosted sign-in.
    func startStandardSignIn(_ request: Request) throws -> Response {
        if let limited = signInLimited(request) { return limited }
        let (viewer, form) = try postedBeforeSession(request)
        // Signed in already (or away, behind "Confirm it's you"): a new sign-in would skip that confirmation.
        if viewer.isSignedIn { return redirect("/accounts") }
        let email = (form["email"] ?? "").lowercased()
        let (session, cookies) = startSession(viewer)
        session.dropSignIn()
        // A bank asks every time (`prompt=login`): a Trifactor session left open on this browser, perhaps another
        // customer's, never signs anyone in here unasked.
        return try pushStandard(
            session, request, purpose: .signIn, loginHint: Self.looksLikeEmail(email) ? email : nil,
            prompt: .login, cookies: cookies,
            failed: { sentence in
                session.flash(sentence)
                return redirect("/", cookies: cookies)
            })
    }

    /// Pushes a request for `purpose` and redirects the browser to Trifactor with it; `failed` answers with a
    /// sentence when Trifactor refused or could not be reached (nothing started).
    func pushStandard(
        _ session: BankSession, _ request: Request, purpose: StandardPending.Purpose, loginHint: String?,
        details: String? = nil, prompt: SignInWithTrifactor.Prompt? = nil, cookies: [String] = [],
        failed: (String) -> Response
    ) throws -> Response {
        guard let client = standardClient(request) else { return failed("Signing in is not set up here.") }
        let pushed: SignInWithTrifactor.Request
        do {
            pushed = try blocking({
                try await client.pushedAuthorizationRequest(
                    level: .multiFactor, prompt: prompt, loginHint: loginHint, authorizationDetails: details)
            })
        } catch {
            logger.log(.info, "bank_push_refused", ["error": .string(String(describing: error))])
            return failed(Self.standardSentence(error))
        }
        session.flows { flows in
            // A few at most: a customer who starts over and over leaves no pile behind.
            if flows.standard.count >= 8, let oldest = flows.standard.min(by: { $0.value.started < $1.value.started }) {
                flows.standard[oldest.key] = nil
            }
            flows.standard[pushed.state] = StandardPending(request: pushed, purpose: purpose, started: now())
        }
        return Response(
            status: 303, headers: [("Location", pushed.url.absoluteString)] + cookies.map { ("Set-Cookie", $0) })
    }

    /// `GET /signin/callback`: Trifactor's answer. The pending request of this state is taken (once), the answer
    /// checked (state, `iss`), the code exchanged with a DPoP proof, the ID token verified (nonce, level), then the
    /// purpose finished: signed in, confirmed, or the transfer spent and moved.
    func standardCallback(_ request: Request) throws -> Response {
        let session = self.session(request).session
        if session == nil, request.query["bounced"] == nil {
            // The bank's cookies are SameSite=Strict, so a redirect from Trifactor's site arrives without them: one
            // hop from the bank's own page brings them (the code still works once, whoever holds it, only with the
            // session whose pending request has this state).
            let target = "/signin/callback?" + request.rawQuery + "&bounced=1"
            var response = Response.html(
                HTML.document(
                    [.element("meta", ["http-equiv": "refresh", "content": "0;url=\(target)"])],
                    [.element("p", [:], [.element("a", ["href": target], ["Continue to Trifactor Bank"])])]
                ).rendered)
            response.headers.append(("Content-Security-Policy", contentSecurityPolicy))
            response.headers.append(("Cache-Control", "no-store"))
            response.headers.append(("Referrer-Policy", "no-referrer"))
            return response
        }
        let state = request.query["state"] ?? ""
        guard let session, let pending = session.flows({ $0.standard.removeValue(forKey: state) }),
            let client = standardClient(request)
        else {
            // Back, a reload, or a second tab after the answer was taken: what it did stands.
            if session?.isSignedIn == true { return redirect("/accounts") }
            return refused(
                409,
                "Nothing from Trifactor is waiting here: it was finished, started again, or never began in this "
                    + "browser (after signing out, a transfer that was being approved is not sent). Nothing was moved. "
                    + "Please sign in again.")
        }
        let url = URL(string: "http://bank" + request.path + "?" + request.rawQuery) ?? URL(string: "http://bank/")!
        let tokens: SignInWithTrifactor.Tokens
        do {
            let code = try client.code(from: url, for: pending.request)
            tokens = try blocking({ try await client.exchange(code: code, for: pending.request) })
        } catch {
            let refusal = (error as? TrifactorError)?.oauthError?.error
            switch pending.purpose {
            case .transfer(let id):
                session.flash(
                    refusal == "access_denied"
                        ? "The transfer was not approved. Nothing was moved."
                        : Self.standardSentence(error) + " Nothing was moved.")
                return redirect(session.pendingTransfer(id) == nil ? "/transfer" : "/transfers/\(id)")
            case .signIn, .comeBack:
                session.flash(
                    refusal == "access_denied" ? "Sign-in cancelled." : Self.standardSentence(error))
                return redirect(pending.purpose == .signIn ? "/" : "/confirm")
            }
        }
        switch pending.purpose {
        case .signIn:
            return try finishStandardSignIn(session, tokens, request)
        case .comeBack:
            guard tokens.idToken.subject == session.standardSubject else {
                return signOut(
                    session, SessionCookie.value(in: request.header("cookie")), request,
                    notice: "That was another customer's sign-in, so you were signed out.")
            }
            // A sign-in asked again is a new session at Trifactor: its logout must end this one.
            session.set(standard: Self.standardSignIn(tokens))
            session.confirm(now())
            return redirect(session.flows { $0.comeBackTo.take() } ?? "/accounts")
        case .transfer(let id):
            return completeStandardTransfer(session, request, id: id, tokens: tokens, client: client)
        }
    }

    /// Signed in through Trifactor: the customer found by the ID token's verified email, a new session cookie (the
    /// old one dies). An email without a customer here gets a page saying so, with the way to open an account.
    func finishStandardSignIn(_ session: BankSession, _ tokens: SignInWithTrifactor.Tokens, _ request: Request)
        throws -> Response
    {
        // Only an address Trifactor verified names a customer: anyone may type someone else's address at sign-up.
        let email = tokens.idToken.emailVerified == true ? tokens.idToken.email?.lowercased() ?? "" : ""
        let subject = tokens.idToken.subject
        // The customer this Trifactor user signed in as before; else the customer of the verified email, bound to this
        // user from now on (once: a customer bound to another Trifactor user is not taken over by an address).
        let found = try database.transaction { db -> (id: String, email: String)? in
            if let known = try db.queryOne(
                "SELECT id, email FROM bank_customers WHERE trifactor_subject = $1", [.text(subject)])
            {
                return (try known.text("id"), try known.text("email"))
            }
            guard
                let row = try db.queryOne(
                    "SELECT id FROM bank_customers WHERE email = $1 AND trifactor_subject IS NULL", [.text(email)])
            else { return nil }
            let id = try row.text("id")
            // Bound here, or by a sign-in racing this one: only the binding this statement made counts.
            guard
                try db.execute(
                    "UPDATE bank_customers SET trifactor_subject = $2 WHERE id = $1 AND trifactor_subject IS NULL",
                    [.text(id), .text(subject)]) == 1
            else { return nil }
            return (id, email)
        }
        guard let (customer, customerEmail) = found else {
            return page(
                Page.layout(
                    "No account here yet", screen(session, request),
                    [
                        Page.paragraph(
                            "You signed in at Trifactor as \(email.isEmpty ? "someone" : email), but Trifactor Bank "
                                + "has no account for that email."),
                        Page.actions([
                            Page.link("Open an account", "/open", class: "button primary"),
                            Page.link("Go to the start", "/"),
                        ]),
                    ]))
        }
        // A new session under a new cookie, carrying nothing of the one that asked (its flows were a visitor's).
        let signedIn = BankSession(now: now())
        signedIn.set(standard: Self.standardSignIn(tokens))
        signedIn.set(stage: .signedIn(customerID: customer, email: customerEmail))
        signedIn.confirm(now())
        let (fresh, _) = sessions.issue(
            replacing: SessionCookie.value(in: request.header("cookie")), carrying: signedIn,
            secure: configuration.secure, now: now())
        return redirect("/accounts", cookies: [fresh.setCookie])
    }

    /// What a session keeps of a sign-in at Trifactor.
    static func standardSignIn(_ tokens: SignInWithTrifactor.Tokens) -> BankSession.StandardSignIn {
        (subject: tokens.idToken.subject, sessionID: tokens.idToken.sessionID, idToken: tokens.idToken.raw)
    }

    /// `POST /backchannel-logout`: Trifactor says a customer's session ended (OpenID Connect Back-Channel Logout 1.0
    /// §2.5): the logout token is verified and every bank session of that Trifactor session (or, without `sid`, of
    /// that customer) ends. 200 when taken; 400 with the spec's error otherwise.
    func backchannelLogout(_ request: Request) -> Response {
        guard let client = standardClients?.first, let token = Form(request.body).raw("logout_token") else {
            return Response.json(["error": "invalid_request"], status: 400)
        }
        do {
            let logout = try blocking({ try await client.logoutToken(token) })
            guard logout.subject != nil || logout.sessionID != nil else {
                return Response.json(["error": "invalid_request"], status: 400)
            }
            let ended = sessions.endAll { session in
                guard let standard = session.standard else { return false }
                return (logout.subject == nil || standard.subject == logout.subject)
                    && (logout.sessionID == nil || standard.sessionID == logout.sessionID)
            }
            logger.log(.info, "bank_backchannel_logout", ["sessions": .int(ended)])
            var response = Response(status: 200)
            response.headers.append(("Cache-Control", "no-store"))
            return response
        } catch {
            return Response.json(["error": "invalid_request"], status: 400)
        }
    }

    /// A sentence for a failure of the standard path.
    static func standardSentence(_ error: any Error) -> String {
        guard let error = error as? TrifactorError else { return "Something went wrong. Please try again." }
        if error.code == .transport { return Self.sentence(error) }
        if let oauth = error.oauthError {
            switch oauth.error {
            case "invalid_grant": return "That sign-in is no longer valid. Please start again."
            case "slow_down", "temporarily_unavailable": return "Trifactor is busy just now. Please try again."
            default: break
            }
        }
        return "Trifactor could not finish this just now. Please try again."
    }
}

/// A request pushed to Trifactor and not answered yet, by its `state`.
struct StandardPending: Sendable {
    enum Purpose: Sendable, Equatable {
        /// Signing in.
        case signIn
        /// Confirming it's them after the idle time.
        case comeBack
        /// Approving the transfer of this id.
        case transfer(String)
    }

    let request: SignInWithTrifactor.Request
    let purpose: Purpose
    let started: Date
}

extension Optional {
    /// The value, leaving nil behind.
    fileprivate mutating func take() -> Wrapped? {
        defer { self = nil }
        return self
    }
}

extension URL {
    /// `host:port` as a Host header writes it (the port left out when it is the scheme's default).
    var hostAndPort: String {
        guard let host = host?.lowercased() else { return "" }
        guard let port, !(scheme == "http" && port == 80), !(scheme == "https" && port == 443) else { return host }
        return "\(host):\(port)"
    }
}

/// The bank's clock as TrifactorKit reads it.
struct ClosureClock: TrifactorClock {
    let read: @Sendable () -> Date
    init(_ read: @escaping @Sendable () -> Date) { self.read = read }
    var now: Date { read() }
}
