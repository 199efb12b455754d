import Core
import Crypto
package import Foundation
package import HTTP
package import Logging
import Sitekeys
package import Store
import Synchronization
package import TrifactorKit
import TrifactorKitVault
import WebUI

/// Trifactor Bank: a relying party of trifactord like any customer's app,
/// with its own database (customers, accounts, the ledger) and its own web
/// sessions, speaking to trifactord only through TrifactorKit, server to
/// server: the browser never holds a Trifactor token.
package final class BankApp: Sendable {
    /// How the bank is set up.
    package struct Configuration: Sendable {
        /// trifactord's base URL.
        package var trifactor: URL
        /// The bank's own database.
        package var databaseURL = "sqlite:data/bank.db"
        package var host = "127.0.0.1"
        package var port = 8090
        /// Served over TLS (cookies get `Secure`).
        package var secure = false
        /// Where the dev phone is, linked from every page in dev mode.
        package var devPhone: URL?
        /// The bank's secret (32 bytes): signs the CSRF tokens of visitors it keeps no session for (`VisitorCSRF`).
        package var secret: [UInt8]
        /// Balances hide after this long without activity.
        package var idleTimeout: TimeInterval = 300
        /// How long Trifactor's word that a customer's session lives holds: a signed-in request later than that asks
        /// again (`GET /v1/session`), so a customer signed out elsewhere is signed out here within this time.
        package var sessionCheckInterval: TimeInterval = 2
        /// The name on the texts, calls, emails and authenticator-app entries Trifactor sends the bank's customers
        /// (`X-Trifactor-Brand`: trifactord takes it from the bank's address when `TRIFACTOR_BRANDS` lists it); nil: Trifactor's own.
        package var brand: String? = "Trifactor Bank"
        /// The bank's client at trifactord's OpenID Provider: customers sign in and approve transfers through
        /// Trifactor's hosted pages (the standard path, `BankApp+Standard.swift`). Nil: the SDK's own sign-in calls
        /// behind the bank's own pages.
        package var standard: StandardClient?

        package init(trifactor: URL, secret: [UInt8]) {
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
    let drafts: DraftCookie
    let transport: any HTTPTransport
    let logger: Logger
    let now: @Sendable () -> Date
    /// One client per registered redirect URI (the standard path), nil on the SDK path.
    let standardClients: [SignInWithTrifactor]?
    private let sweeper = Mutex<Task<Void, Never>?>(nil)

    /// - Parameters:
    ///   - transport: how the bank reaches trifactord (a fake in tests).
    ///   - now: the time, for sessions, idle checks, recognised browsers and the ledger.
    package init(
        configuration: Configuration, database: any Database, logger: Logger = .standardError,
        transport: any HTTPTransport = URLSessionTransport(),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.configuration = configuration
        self.database = database
        ledger = Ledger(database: database)
        browsers = KnownBrowsers(database: database)
        visitors = VisitorCSRF(secret: configuration.secret)
        drafts = DraftCookie(secret: configuration.secret)
        self.transport = transport
        self.logger = logger
        self.now = now
        standardClients = configuration.standard.map { standard in
            standard.redirectURIs.map {
                SignInWithTrifactor(
                    issuer: standard.issuer, clientID: standard.clientID, redirectURI: $0, scopes: ["openid", "email"],
                    credentials: standard.credentials, crypto: OpenSSLTokenCrypto(), transport: transport,
                    clock: ClosureClock(now))
            }
        }
    }

    deinit { sweeper.withLock { $0?.cancel() } }

    /// Starts serving, and sweeping idle sessions every minute; the caller stops the returned server.
    package func start() throws -> HTTPServer {
        let server = try server()
        try server.start()
        startSweeping(every: .seconds(60))
        return server
    }

    /// The bank's server, its database migrated, not listening yet (tests answer requests in-process with it).
    func server() throws -> HTTPServer {
        try database.migrate(BankSchema.migrations)
        try ledger.assignMissingIBANs()
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
        sweeper.withLock {
            $0?.cancel()
            $0 = task
        }
    }

    func router() -> Router {
        var router = Router()
        addStatic(&router)
        addSignIn(&router)
        addStandard(&router)
        addByPhone(&router)
        addAccounts(&router)
        addTransfers(&router)
        addOpening(&router)
        addReset(&router)
        addSetup(&router)
        addComingBack(&router)
        addSettings(&router)
        addRecoveryCodes(&router)
        addAuthenticatorApp(&router)
        addBrowsers(&router)
        addPasskeys(&router)
        addFallbacks(&router)
        return router
    }

    /// The stylesheet, the scripts, the logo, the icons and the sitekey pictures.
    func addStatic(_ router: inout Router) {
        func file(_ path: String, _ type: String, _ text: String) {
            router.add("GET", path, execution: .inline) { _ in
                Response(
                    status: 200, headers: [("Content-Type", type), ("Cache-Control", "max-age=300")],
                    body: Array(text.utf8))
            }
        }
        file("/static/bank.css", "text/css; charset=utf-8", Style.css)
        file("/static/bank.js", "text/javascript; charset=utf-8", BankScript.source)
        file("/static/passkey.js", "text/javascript; charset=utf-8", PasskeyScript.source)
        file("/static/logo.svg", "image/svg+xml", Artwork.logo)
        for (name, svg) in Artwork.icons { file("/static/icons/\(name).svg", "image/svg+xml", svg) }
        router.add("GET", SitekeyPictures.route, execution: .inline, SitekeyPictures.serve)
    }

    /// The customer's Trifactor client for this browser's request (its IP, user agent and trace forwarded).
    func trifactor(_ session: BankSession, _ request: Request) -> TrifactorClient {
        TrifactorClient(
            server: configuration.trifactor, transport: transport, secrets: session.secrets, profile: "customer",
            userAgent: "Trifactor Bank"
        )
        .forwarding(
            clientAddress: request.remoteAddress, userAgent: request.header("user-agent"),
            traceParent: TraceParent.child(of: request.header("traceparent")), brand: configuration.brand)
    }
}
