package import API
package import Core
import Crypto
package import Foundation
package import HTTP
package import Logging
package import Store
import Synchronization
package import Testing
package import TrifactorServer
package import TrifactorTestSupport

/// A clock that tests move by hand.
package final class TestClock: Sendable {
    private let current = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
    package init() {}
    package var clock: Clock { Clock { [self] in current.withLock { $0 } } }
    package func advance(_ seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

/// Log lines kept in memory, to look for request ids and secrets.
package final class LogCapture: Sendable {
    private let lines = Mutex<[String]>([])
    package init() {}
    package var logger: Logger {
        Logger { [self] line in
            lines.withLock { $0.append(line) }
            // TRIFACTOR_TEST_ERRORS=1 shows every error line (a 500's cause) on stderr, to chase a rare failure.
            if Self.showErrors && line.contains(#""level":"error""#) {
                FileHandle.standardError.write(Data((line + "\n").utf8))
            }
        }
    }
    private static let showErrors = ProcessInfo.processInfo.environment["TRIFACTOR_TEST_ERRORS"] == "1"
    package var all: [String] { lines.withLock { $0 } }
}

/// How a test's requests reach the server: in process, through the router
/// and executors without a socket (the default: fast, and the same code
/// path after HTTP parsing), or over a real loopback connection. The same
/// test body runs over either; `server.client()` is always a socket.
package enum Transport: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case inProcess = "in process"
    case socket

    package var testDescription: String { rawValue }
}

/// The real server on a free loopback port, over a fresh database of the
/// given backend, with a hand-moved clock and a captured log. Its background
/// loops (outbox, phone verification timers, session uses, housekeeping)
/// run only when a test calls `tick()`.
package final class TestServer {
    /// Where `send`, `json` and `get` go.
    package let transport: Transport
    package let runtime: Runtime
    package var server: HTTPServer { runtime.server }
    package var services: Services { runtime.services }
    package var database: any Database { runtime.database }
    package let sender = TestSender()
    package let clock = TestClock()
    package let log = LogCapture()
    package var port: Int { server.port }
    /// The test clock's time in stored milliseconds.
    package var nowMillis: Int64 { clock.clock.now().millis }

    /// Defaults for tests: dev mode, cheap Argon2id, generous IP limits.
    package static func configuration(_ tweak: (inout Configuration) -> Void = { _ in }) -> Configuration {
        var c = Configuration()
        c.dev = true
        c.argon2OpsLimit = 1
        c.argon2MemoryKiB = 8 * 1024
        c.signInPerIPBurst = 10_000
        c.signUpPerIPBurst = 10_000
        c.http.host = "127.0.0.1"
        c.http.port = 0
        c.keyFile =
            FileManager.default.temporaryDirectory.appendingPathComponent("trifactor-test-\(UUID().uuidString).key")
            .path
        tweak(&c)
        return c
    }

    package init(
        database: any Database, configuration: Configuration = TestServer.configuration(), withSender: Bool = true,
        transport: Transport = .inProcess, extraRoutes: (inout Router) -> Void = { _ in }
    ) throws {
        self.transport = transport
        try database.migrate(Schema.migrations)
        let sealer = try KeyRing(entries: [KeyFile.Entry(id: "k1", created: Date(), key: SecureRandom.bytes(32))])
        let services = try Services.live(
            database: database, configuration: configuration, sealer: sealer, passwords: try CommonPasswords.policy(),
            sender: withSender ? sender : nil, clock: clock.clock, logger: log.logger)
        runtime = try Application.start(services, tasks: .manual, extraRoutes: extraRoutes)
    }

    /// Runs one pass of every background loop (the outbox delivers what is due, timers fire, uses are written).
    package func tick() { runtime.tick() }

    deinit { runtime.stop(drainTimeout: 5) }

    package func client() throws -> HTTPTestClient { try HTTPTestClient(port: port) }

    /// A request over this server's transport (a new connection for each over a socket).
    package func send(_ method: String, _ target: String, headers: [String: String] = [:], body: [UInt8] = []) throws
        -> HTTPTestClient.Response
    {
        switch transport {
        case .socket:
            return try client().request(method, target, headers: headers, body: body)
        case .inProcess:
            // What libmicrohttpd hands a handler: the path and the query
            // arguments percent-decoded, '+' in arguments read as a space.
            let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
            var query: [String: String] = [:]
            for pair in parts.count > 1 ? parts[1].split(separator: "&") : [] {
                let field = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let decode = { (text: Substring) in
                    text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text)
                }
                query[decode(field[0])] = field.count > 1 ? decode(field[1]) : ""
            }
            let path = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            var fields = ["Host": "127.0.0.1", "User-Agent": "trifactor-tests"]
            for (name, value) in headers { fields[name] = value }
            let answer = server.respond(
                method: method, path: path, query: query, headers: fields, body: body,
                rawQuery: parts.count > 1 ? String(parts[1]) : "")
            var lowered: [String: String] = [:]
            for field in answer.headers { lowered[field.name.lowercased()] = field.value }
            return HTTPTestClient.Response(status: answer.status, headers: lowered, body: answer.body)
        }
    }

    /// A JSON request.
    package func json(_ method: String, _ path: String, _ object: Any, token: String? = nil) throws
        -> HTTPTestClient.Response
    {
        var headers = ["Content-Type": "application/json"]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        return try send(method, path, headers: headers, body: Array(try JSONSerialization.data(withJSONObject: object)))
    }

    /// A request with a JSON body encoded from a shared API type.
    package func send(_ method: String, _ path: String, _ value: some Encodable, token: String? = nil) throws
        -> HTTPTestClient.Response
    {
        var headers = ["Content-Type": "application/json"]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        return try send(method, path, headers: headers, body: Array(try WireJSON.sharedEncoder.encode(value)))
    }

    package func get(_ path: String, token: String? = nil) throws -> HTTPTestClient.Response {
        try send("GET", path, headers: token.map { ["Authorization": "Bearer \($0)"] } ?? [:])
    }

    /// The dev outbox's messages to `to`, newest first.
    package func outbox(to: String) throws -> [OutboxMessage] {
        try get("/dev/outbox?to=\(to.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? to)").decode(
            OutboxListing.self
        ).messages
    }

    /// The newest dev-outbox message to `to`.
    package func lastMessage(to: String) throws -> String? {
        try outbox(to: to).first?.text
    }

    /// The 6-digit code in the newest message to `to`.
    package func lastCode(to: String) throws -> String? {
        guard let text = try lastMessage(to: to), let range = text.range(of: #"\d{6}"#, options: .regularExpression)
        else { return nil }
        return String(text[range])
    }

    /// Signs up, verifies the email when asked, and signs in; returns the token.
    @discardableResult
    package func signUp(_ email: String, password: String = "correct horse battery", verify: Bool = true) throws
        -> String?
    {
        _ = try json("POST", "/v1/accounts", ["email": email, "password": password])
        if verify, let code = try lastCode(to: email) {
            _ = try json("POST", "/v1/accounts/verify-email", ["email": email, "code": code])
        }
        let signedIn = try json("POST", "/v1/sessions", ["email": email, "password": password])
        return signedIn.status == 201 ? try signedIn.decode(SessionCreated.self).token : nil
    }

    /// Audit event kinds, oldest first.
    package func auditKinds() throws -> [String] {
        try database.transaction { try AuditLog.tail(limit: 1000, on: $0) }.map(\.kind)
    }

    /// The details of the audit lines of `kind`.
    package func auditDetails(_ kind: String) throws -> [String] {
        try database.transaction { try AuditLog.tail(limit: 1000, on: $0) }.filter { $0.kind == kind }.compactMap(
            \.detail)
    }
}

extension Backend {
    /// Runs `body` with two test servers sharing one fresh database (two
    /// instances, as behind a load balancer), each with its own pool; the
    /// second is stopped afterwards.
    package func withTwoInstances(
        _ configuration: Configuration = TestServer.configuration(), poolSize: Int = 2,
        _ body: (_ first: TestServer, _ second: TestServer) throws -> Void
    ) throws {
        try withFreshDatabase { database, url in
            let first = try TestServer(database: database, configuration: configuration)
            let secondDatabase = try openDatabase(url: url, poolSize: poolSize)
            defer { secondDatabase.close() }
            let second = try TestServer(database: secondDatabase, configuration: configuration)
            defer { second.runtime.stop(drainTimeout: 5) }
            try body(first, second)
        }
    }

    /// Runs `body` with a test server over a fresh database of this backend.
    package func withServer(
        _ configuration: Configuration = TestServer.configuration(), transport: Transport = .inProcess,
        extraRoutes: (inout Router) -> Void = { _ in }, _ body: (TestServer) throws -> Void
    ) throws {
        try withFreshDatabase { database, _ in
            let server = try TestServer(
                database: database, configuration: configuration, transport: transport, extraRoutes: extraRoutes)
            try body(server)
        }
    }
}
