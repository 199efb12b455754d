import Core
import Crypto
import Foundation
import Logging
import HTTP
import Store
import Synchronization
@testable import TrifactorServer
import TrifactorTestSupport

/// A clock that tests move by hand.
final class TestClock: Sendable {
    private let current = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
    var clock: Clock { Clock { [self] in current.withLock { $0 } } }
    func advance(_ seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

/// Log lines kept in memory, to look for request ids and secrets.
final class LogCapture: Sendable {
    private let lines = Mutex<[String]>([])
    var logger: Logger { Logger { [self] line in lines.withLock { $0.append(line) } } }
    var all: [String] { lines.withLock { $0 } }
}

/// The real server on a free loopback port, over a fresh database of the
/// given backend, with a hand-moved clock and a captured log. Its background
/// loops (outbox, phone verification timers, session uses, housekeeping)
/// run only when a test calls `tick()`.
final class TestServer {
    let runtime: Runtime
    var server: HTTPServer { runtime.server }
    var services: Services { runtime.services }
    var database: any Database { runtime.database }
    let sender = TestSender()
    let clock = TestClock()
    let log = LogCapture()
    var port: Int { server.port }
    /// The test clock's time in stored milliseconds.
    var nowMillis: Int64 { clock.clock.now().millis }

    /// Defaults for tests: dev mode, cheap Argon2id, generous IP limits.
    static func configuration(_ tweak: (inout Configuration) -> Void = { _ in }) -> Configuration {
        var c = Configuration()
        c.dev = true
        c.argon2OpsLimit = 1
        c.argon2MemoryKiB = 8 * 1024
        c.signInPerIPBurst = 10_000
        c.signUpPerIPBurst = 10_000
        c.http.host = "127.0.0.1"
        c.http.port = 0
        c.keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("trifactor-test-\(UUID().uuidString).key").path
        tweak(&c)
        return c
    }

    init(database: any Database, configuration: Configuration = TestServer.configuration(), withSender: Bool = true,
         extraRoutes: (inout Router) -> Void = { _ in }) throws {
        try database.migrate(Schema.migrations)
        let sealer = try SealedBox(key: SecureRandom.bytes(32))
        let services = try Services.live(database: database, configuration: configuration, sealer: sealer, blocklist: try CommonPasswords.load(),
                                         sender: withSender ? sender : nil, clock: clock.clock, logger: log.logger)
        runtime = try Application.start(services, tasks: .manual, extraRoutes: extraRoutes)
    }

    /// Runs one pass of every background loop (the outbox delivers what is due, timers fire, uses are written).
    func tick() { runtime.tick() }

    deinit { runtime.stop(drainTimeout: 5) }

    func client() throws -> HTTPTestClient { try HTTPTestClient(port: port) }

    /// A JSON request on a new connection.
    func json(_ method: String, _ path: String, _ object: Any, token: String? = nil) throws -> HTTPTestClient.Response {
        try client().json(method, path, object, token: token)
    }

    func get(_ path: String, token: String? = nil) throws -> HTTPTestClient.Response {
        try client().request("GET", path, headers: token.map { ["Authorization": "Bearer \($0)"] } ?? [:])
    }

    /// The newest dev-outbox message to `to`.
    func lastMessage(to: String) throws -> String? {
        let listing = try get("/dev/outbox?to=\(to.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? to)")
        return (listing.json["messages"] as? [[String: Any]])?.first?["text"] as? String
    }

    /// The 6-digit code in the newest message to `to`.
    func lastCode(to: String) throws -> String? {
        guard let text = try lastMessage(to: to), let range = text.range(of: #"\d{6}"#, options: .regularExpression) else { return nil }
        return String(text[range])
    }

    /// Signs up, verifies the email when asked, and signs in; returns the token.
    @discardableResult
    func signUp(_ email: String, password: String = "correct horse battery", verify: Bool = true) throws -> String? {
        _ = try json("POST", "/v1/accounts", ["email": email, "password": password])
        if verify, let code = try lastCode(to: email) {
            _ = try json("POST", "/v1/accounts/verify-email", ["email": email, "code": code])
        }
        return try json("POST", "/v1/sessions", ["email": email, "password": password]).json["token"] as? String
    }

    /// Audit event kinds, oldest first.
    func auditKinds() throws -> [String] {
        try database.transaction { try AuditLog.tail(limit: 1000, on: $0) }.map(\.kind)
    }
}

extension Backend {
    /// Runs `body` with a test server over a fresh database of this backend.
    func withServer(_ configuration: Configuration = TestServer.configuration(), extraRoutes: (inout Router) -> Void = { _ in },
                    _ body: (TestServer) throws -> Void) throws {
        try withFreshDatabase { database, _ in
            let server = try TestServer(database: database, configuration: configuration, extraRoutes: extraRoutes)
            try body(server)
        }
    }
}
