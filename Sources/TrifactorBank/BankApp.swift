import Core
import Crypto
import Foundation
import HTTP
import Logging
import Store
import Synchronization
import TrifactorKit

/// Trifactor Bank: a relying party of trifactord like any customer's app,
/// with its own database (customers, accounts, the ledger) and its own web
/// sessions, speaking to trifactord only through TrifactorKit, server to
/// server: the browser never holds a Trifactor token.
public final class BankApp: Sendable {
    /// How the bank is set up.
    public struct Configuration: Sendable {
        /// trifactord's base URL.
        public var trifactor: URL
        /// The bank's own database.
        public var databaseURL = "sqlite:data/bank.db"
        public var host = "127.0.0.1"
        public var port = 8090
        /// Served over TLS (cookies get `Secure`).
        public var secure = false
        /// Where the dev phone is, linked from every page in dev mode.
        public var devPhone: URL?
        /// The bank's secret (32 bytes): signs the CSRF tokens of visitors it keeps no session for (`VisitorCSRF`).
        public var secret: [UInt8]
        /// Balances hide after this long without activity.
        public var idleTimeout: TimeInterval = 300
        /// How long Trifactor's word that a customer's session lives holds: a signed-in request later than that asks
        /// again (`GET /v1/session`), so a customer signed out elsewhere is signed out here within this time.
        public var sessionCheckInterval: TimeInterval = 2

        public init(trifactor: URL, secret: [UInt8]) {
            self.trifactor = trifactor
            self.secret = secret
        }
    }

    let configuration: Configuration
    let database: any Database
    let ledger: Ledger
    let browsers: KnownBrowsers
    let sessions = BankSessions()
    let signIns = SignInLimiter()
    let visitors: VisitorCSRF
    let transport: any HTTPTransport
    let logger: Logger
    let now: @Sendable () -> Date
    private let sweeper = Mutex<Task<Void, Never>?>(nil)

    /// - Parameters:
    ///   - transport: how the bank reaches trifactord (a fake in tests).
    ///   - now: the time, for sessions, idle checks, recognised browsers and the ledger.
    public init(configuration: Configuration, database: any Database, logger: Logger = .standardError, transport: any HTTPTransport = URLSessionTransport(),
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.configuration = configuration
        self.database = database
        ledger = Ledger(database: database)
        browsers = KnownBrowsers(database: database)
        visitors = VisitorCSRF(secret: configuration.secret)
        self.transport = transport
        self.logger = logger
        self.now = now
    }

    deinit { sweeper.withLock { $0?.cancel() } }

    /// Starts serving, and sweeping idle sessions every minute; the caller stops the returned server.
    public func start() throws -> HTTPServer {
        let server = try server()
        try server.start()
        startSweeping(every: .seconds(60))
        return server
    }

    /// The bank's server, its database migrated, not listening yet (tests answer requests in-process with it).
    func server() throws -> HTTPServer {
        try database.migrate(BankSchema.migrations)
        var http = HTTPServerConfiguration(host: configuration.host, port: configuration.port, databaseThreads: 8)
        http.connectionsPerIP = 0
        return HTTPServer(configuration: http, router: router(), logger: logger)
    }

    /// Drops idle sessions and full sign-in buckets (what the timer runs).
    func sweep() {
        sessions.sweep(now: now())
        signIns.sweep(now: now())
    }

    private func startSweeping(every interval: Duration) {
        let task = Task.detached { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                self?.sweep()
            }
        }
        sweeper.withLock { $0?.cancel(); $0 = task }
    }

    func router() -> Router {
        var router = Router()
        router.add("GET", "/static/bank.css", execution: .inline) { _ in
            Response(status: 200, headers: [("Content-Type", "text/css; charset=utf-8"), ("Cache-Control", "max-age=300")], body: Array(Page.css.utf8))
        }
        router.add("GET", "/static/bank.js", execution: .inline) { _ in
            Response(status: 200, headers: [("Content-Type", "text/javascript; charset=utf-8"), ("Cache-Control", "max-age=300")], body: Array(Page.script.utf8))
        }
        router.add("GET", "/static/passkey.js", execution: .inline) { _ in
            Response(status: 200, headers: [("Content-Type", "text/javascript; charset=utf-8"), ("Cache-Control", "max-age=300")],
                     body: Array(PasskeyScript.source.utf8))
        }
        router.add("GET", "/sitekeys/:name", execution: .inline) { request in
            let name = (request.parameters["name"] ?? "").replacingOccurrences(of: ".svg", with: "")
            guard Sitekey.pictures.contains(name), let url = Bundle.module.url(forResource: name, withExtension: "svg", subdirectory: "sitekeys"),
                  let data = try? Data(contentsOf: url) else { return Response(status: 404) }
            return Response(status: 200, headers: [("Content-Type", "image/svg+xml"), ("Cache-Control", "max-age=3600")], body: Array(data))
        }
        addSignIn(&router)
        addAccounts(&router)
        addOpening(&router)
        addSetup(&router)
        addComingBack(&router)
        addSettings(&router)
        addBrowsers(&router)
        addPasskeys(&router)
        return router
    }

    // MARK: Helpers for every route

    /// The browser's session and cookie, if it has a live one.
    func session(_ request: Request) -> (cookie: String?, session: BankSession?) {
        let cookie = SessionCookie.value(in: request.header("cookie"))
        let found = sessions.find(cookie, now: now())
        found?.touch(now())
        return (cookie, found)
    }

    static let contentSecurityPolicy = "default-src 'none'; img-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'; "
        + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    func page(_ html: HTML, status: Int = 200, cookies: [String] = []) -> Response {
        var response = Response.html(html.rendered, status: status)
        response.headers.append(("Content-Security-Policy", Self.contentSecurityPolicy))
        for cookie in cookies { response.headers.append(("Set-Cookie", cookie)) }
        return response
    }

    func redirect(_ location: String, cookies: [String] = []) -> Response {
        var response = Response(status: 303, headers: [("Location", location)])
        for cookie in cookies { response.headers.append(("Set-Cookie", cookie)) }
        return response
    }

    /// A page for a browser without a (live) session or with a bad CSRF token: nothing was done.
    func refused(_ status: Int, _ sentence: String) -> Response {
        page(Page.layout(status == 403 ? "Please try again" : "Something went wrong", session: nil, devPhone: configuration.devPhone,
                         [Page.paragraph(sentence), Page.link("Start again", "/")]), status: status)
    }

    /// A page to answer instead of going on (a stale session, a bad CSRF token).
    struct Refusal: Error {
        let response: Response
    }

    /// Adds a route whose `Refusal`s become their page and whose other errors a plain 500 page (logged). For a signed-in
    /// browser it is the one place that learns that the customer's Trifactor session ended (signed out elsewhere, a
    /// password change): asked before the handler when due (`checkTrifactorSession`), or found by any Trifactor call
    /// the handler made. Then the bank session ends too and the browser goes to the sign-in page with a notice. A
    /// Trifactor that cannot be reached signs no one out: the page says so.
    func route(_ router: inout Router, _ method: String, _ path: String, _ handler: @escaping @Sendable (Request) throws -> Response) {
        router.add(method, path) { [self] request in
            let (cookie, found) = self.session(request)
            let signedIn = found?.isSignedIn == true ? found : nil
            if let signedIn, let signedOut = checkTrifactorSession(signedIn, cookie: cookie, request) { return signedOut }
            do {
                let response = try handler(request)
                if let signedIn, trifactorSessionEnded(signedIn, cookie: cookie, error: nil) { return signedOutElsewhere(cookie, request) }
                return response
            } catch let refusal as Refusal {
                return refusal.response
            } catch {
                if let signedIn, trifactorSessionEnded(signedIn, cookie: cookie, error: error) { return signedOutElsewhere(cookie, request) }
                if case .transport? = error as? TrifactorError { return refused(503, Self.sentence(error)) }
                logger.log("error", "bank_failure", ["path": .string(request.path), "error": .string(String(reflecting: error))])
                return refused(500, "Something went wrong on our side. Nothing was done; please try again.")
            }
        }
    }

    /// The session of a POST whose CSRF token matches; otherwise a 403 `Refusal` (nothing is done).
    func posted(_ request: Request) throws(Refusal) -> (BankSession, Form, String?) {
        let (cookie, session) = self.session(request)
        guard let session else { throw Refusal(response: refused(403, "Your session has ended. Nothing was done.")) }
        let form = Form(request.body)
        guard CSRF.isValid(submitted: form[CSRF.field], expected: session.csrf) else {
            throw Refusal(response: refused(403, "This form was not sent from this page. Nothing was done."))
        }
        return (session, form, cookie)
    }

    /// The session of a JSON POST from the passkey script whose `X-CSRF-Token` matches; otherwise a 403 `Refusal`.
    func postedJSON(_ request: Request) throws(Refusal) -> (BankSession, String?) {
        let (cookie, session) = self.session(request)
        guard let session, CSRF.isValid(submitted: request.header("x-csrf-token"), expected: session.csrf) else {
            throw Refusal(response: jsonError(403, "Your session has ended or this page is stale. Reload it."))
        }
        return (session, cookie)
    }

    func jsonError(_ status: Int, _ sentence: String) -> Response {
        Response.json(["error": sentence], status: status)
    }

    /// The customer's Trifactor client for this browser's request (its IP, user agent and trace forwarded).
    func trifactor(_ session: BankSession, _ request: Request) -> TrifactorClient {
        TrifactorClient(server: configuration.trifactor, transport: transport, secrets: session.secrets, profile: "customer", userAgent: "Trifactor Bank")
            .forwarding(clientAddress: request.remoteAddress, userAgent: request.header("user-agent"),
                        traceParent: TraceParent.child(of: request.header("traceparent")))
    }

    /// "That code is wrong", with the tries left when Trifactor says how many.
    static func wrongCode(_ error: TrifactorError) -> String {
        guard let left = error.problem?.remainingAttempts else { return "That code is wrong. Check it and try again." }
        if left == 0 { return "That code is wrong, and that was the last try: confirming is paused for a while." }
        return "That code is wrong. \(left) more \(left == 1 ? "try" : "tries") before confirming is paused for a while."
    }

    /// A sentence for an SDK failure, safe to show.
    static func sentence(_ error: any Error) -> String {
        guard let error = error as? TrifactorError else { return "Something went wrong. Please try again." }
        switch error {
        case .server(let p):
            let wait = p.retryAfter.map { " Try again in \(Int($0.rounded(.up))) seconds." } ?? ""
            return p.detail + wait
        case .transport: return "The bank cannot reach its sign-in service right now. Please try again in a minute."
        default: return error.description
        }
    }
}
