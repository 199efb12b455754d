import API
import Foundation
import HTTP
import Logging
import Store
import Synchronization
import TrifactorKit
import TrifactorTestSupport

@testable import TrifactorBank

/// trifactord as the bank's tests need it: each request answered by `answer` (a transport failure by default), counted by path.
final class FakeTrifactor: HTTPTransport {
    private let state = Mutex<(answer: @Sendable (HTTPRequest) throws -> HTTPResponse, calls: [String: Int])>(
        ({ request in throw TransportFailure(.unreachable, host: request.url.host ?? "trifactor.test") }, [:]))

    /// How many requests reached `path`.
    func calls(_ path: String) -> Int { state.withLock { $0.calls[path, default: 0] } }

    /// Answers every request from now on with `answer`.
    func answer(_ answer: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse) {
        state.withLock { $0.answer = answer }
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let answer = state.withLock { state in
            state.calls[request.url.path, default: 0] += 1
            return state.answer
        }
        return try answer(request)
    }

    /// A JSON answer.
    static func json(_ value: some Encodable) -> HTTPResponse {
        HTTPResponse(
            status: 200, headers: ["content-type": "application/json"], body: try! WireJSON.sharedEncoder.encode(value))
    }

    /// A problem+json answer, as trifactord refuses.
    static func problem(_ status: Int, _ code: ProblemCode) -> HTTPResponse {
        let body = try! WireJSON.sharedEncoder.encode(
            Problem(status: status, code: code, title: code.rawValue, detail: "Refused: \(code)."))
        return HTTPResponse(status: status, headers: ["content-type": "application/problem+json"], body: body)
    }

    /// A refusal as trifactord sends it, with the wrong codes left and the wait when there are.
    static func problem(
        _ status: Int, _ code: ProblemCode, detail: String, remaining: Int? = nil, retryAfter: Int? = nil
    ) -> HTTPResponse {
        var problem = Problem(status: status, code: code, title: code.rawValue, detail: detail)
        problem.remainingAttempts = remaining
        var headers = ["content-type": "application/problem+json"]
        if let retryAfter { headers["retry-after"] = String(retryAfter) }
        return HTTPResponse(status: status, headers: headers, body: try! WireJSON.sharedEncoder.encode(problem))
    }

    /// An empty answer with `status`.
    static func empty(_ status: Int = 204) -> HTTPResponse { HTTPResponse(status: status, headers: [:], body: Data()) }

    /// Answers by `table` (method, path, the request's JSON body); what it leaves is a live session for
    /// `GET /v1/session` and a 404 for anything else.
    func routes(_ table: @escaping @Sendable (_ method: String, _ path: String, _ body: [String: Any]) -> HTTPResponse?)
    {
        answer { request in
            let body = request.body.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] } ?? [:]
            if let answer = table(request.method, request.url.path, body) { return answer }
            if request.method == "GET", request.url.path == "/v1/session" { return FakeTrifactor.liveSession }
            return FakeTrifactor.problem(404, "not_found")
        }
    }

    /// `POST /v1/sessions`' answer of a signed-in password (no second factor).
    static let passwordSession: HTTPResponse = {
        var created = json(
            SessionCreated(
                token: "token",
                session: SessionInfo(id: "s1", aal: 1, methods: ["pwd"], createdAt: Date(), expiresAt: Date() + 3600)))
        created.status = 201
        return created
    }()

    /// `GET /v1/mfa/enrollments` of a customer with these factors (kind, id, name; phones masked as +*****3456).
    static func factors(_ list: [(kind: FactorKind, id: String, name: String)]) -> HTTPResponse {
        json(
            EnrolledFactors(
                enrollments: list.map {
                    EnrolledFactor(
                        enrollmentID: $0.id, kind: $0.kind, displayName: $0.name,
                        maskedPhone: $0.kind == "phone" ? "+*****3456" : nil,
                        enrolledAt: Date(timeIntervalSince1970: 1_900_000_000), lastUsedAt: nil)
                }))
    }

    /// `GET /v1/session` of a live session.
    static let liveSession = json(
        CurrentSession(
            session: SessionInfo(
                id: "s1", aal: 2, methods: ["pwd", "otp"], createdAt: Date(), expiresAt: Date() + 3600),
            user: UserInfo(
                id: "u1", email: "ann@example.com", displayName: "Ann", emailVerified: true, createdAt: Date())))
}

/// A value a test and its fake Trifactor share.
final class Shared<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    var current: Value { value.withLock { $0 } }
    func set(_ new: Value) { value.withLock { $0 = new } }
}

/// A clock the test moves.
final class TestClock: Sendable {
    private let time = Mutex(Date(timeIntervalSince1970: 1_900_000_000))
    var now: Date { time.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { time.withLock { $0 += seconds } }
}

/// A browser for in-process requests: it keeps the cookies the bank sets and sends them back. Each request runs on a
/// thread of its own, as a connection's would: a handler waits there for its Trifactor calls (`blocking`), which need
/// the cooperative pool that the test itself runs on.
/// `@unchecked Sendable`: a test drives its browser from one task, one request at a time.
final class TestBrowser: @unchecked Sendable {
    let server: HTTPServer
    let address: String
    private(set) var cookies: [String: String] = [:]

    init(_ server: HTTPServer, address: String = "127.0.0.1") {
        self.server = server
        self.address = address
    }

    /// A request as this browser sends it; the answer's cookies are kept.
    func send(
        _ method: String, _ path: String, form: [String: String]? = nil, json csrf: String? = nil,
        body json: String = "{}"
    ) async -> Response {
        var headers: [String: String] = [:]
        if !cookies.isEmpty {
            headers["Cookie"] = cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(
                separator: "; ")
        }
        var body: [UInt8] = []
        if let form {
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            body = Array(
                form.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }
                    .joined(separator: "&").utf8)
        }
        if let csrf {
            headers["Content-Type"] = "application/json"
            headers["X-CSRF-Token"] = csrf
            body = Array(json.utf8)
        }
        var query: [String: String] = [:]
        var target = path
        if let mark = path.firstIndex(of: "?") {
            target = String(path[..<mark])
            for pair in path[path.index(after: mark)...].split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                query[String(parts[0])] = parts.count == 2 ? String(parts[1]) : ""
            }
        }
        let (server, address, request) = (server, address, (target: target, query: query, headers: headers, body: body))
        let response = await withCheckedContinuation { (answer: CheckedContinuation<Response, Never>) in
            Thread {
                answer.resume(
                    returning: server.respond(
                        method: method, path: request.target, query: request.query, headers: request.headers,
                        body: request.body,
                        remoteAddress: address))
            }
            .start()
        }
        for (name, value) in response.headers where name.lowercased() == "set-cookie" {
            let pair = value.prefix { $0 != ";" }.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                .map(String.init)
            if value.contains("Max-Age=0") { cookies[pair[0]] = nil } else { cookies[pair[0]] = pair[1] }
        }
        return response
    }

    /// A request, then the GET of each redirect it answers (at most five), as a browser follows a 303: the last answer.
    func follow(_ method: String, _ path: String, form: [String: String]? = nil) async -> Response {
        var response = await send(method, path, form: form)
        for _ in 0..<5 {
            guard [302, 303].contains(response.status), let location = response.header("Location") else { break }
            response = await send("GET", location)
        }
        return response
    }

    /// Sets a cookie as if the bank had.
    func set(cookie name: String, _ value: String) { cookies[name] = value }
}

extension Response {
    var text: String { String(decoding: body, as: UTF8.self) }
    func header(_ name: String) -> String? { headers.first { $0.name.lowercased() == name.lowercased() }?.value }
    /// The value of the page's first hidden field `name` (a transfer's id).
    func hidden(_ name: String) -> String? {
        guard let range = text.range(of: #"name="\#(name)" value=""#) else { return nil }
        return String(text[range.upperBound...].prefix { $0 != "\"" })
    }

    /// The CSRF token of the page's first form.
    var csrf: String? {
        guard let range = text.range(of: #"name="csrf" value=""#) else { return nil }
        return String(text[range.upperBound...].prefix { $0 != "\"" })
    }
}

/// A bank on a fresh SQLite database, its server answering in-process, a fake trifactord and a clock the test moves.
struct BankHarness {
    let app: BankApp
    let server: HTTPServer
    let trifactor: FakeTrifactor
    let clock: TestClock
    let database: any Database

    static func run(sessionCheckInterval: TimeInterval = 2, _ body: (BankHarness) async throws -> Void) async throws {
        try await Backend.all[0].withFreshDatabase(poolSize: 4) { database, _ in
            var configuration = BankApp.Configuration(
                trifactor: URL(string: "http://trifactor.test")!, secret: Array(repeating: 7, count: 32))
            configuration.sessionCheckInterval = sessionCheckInterval
            let trifactor = FakeTrifactor()
            let clock = TestClock()
            let app = BankApp(
                configuration: configuration, database: database, logger: Logger { _ in }, transport: trifactor,
                now: { clock.now })
            let server = try app.server()
            try await body(
                BankHarness(app: app, server: server, trifactor: trifactor, clock: clock, database: database))
        }
    }

    /// A customer with a sitekey and two accounts: their id.
    func customer(_ email: String, picture: String = "owl", phrase: String = "night watch") throws -> String {
        let id = UUID().uuidString.lowercased()
        try database.transaction { db in
            try db.execute(
                """
                INSERT INTO bank_customers (id, email, name, phone, sitekey_picture, sitekey_phrase, created_at) VALUES ($1, $2, 'Ann', '+447400123456', $3, $4, 0)
                """, [.text(id), .text(email), .text(picture), .text(phrase)])
            _ = try app.ledger.openAccounts(
                for: id, currency: "EUR", checking: 250_000, saving: 0, now: clock.now, on: db)
        }
        return id
    }

    /// Ann, a customer with two accounts, signed in on a browser of her own.
    func ann() async throws -> (id: String, browser: TestBrowser, session: BankSession) {
        let id = try customer("ann@example.com")
        let (browser, session) = try await signedIn(id)
        return (id, browser, session)
    }

    /// A browser signed in as `customerID` (its Trifactor token held by the session, as after a sign-in).
    func signedIn(_ customerID: String, email: String = "ann@example.com") async throws -> (TestBrowser, BankSession) {
        let session = BankSession(now: clock.now)
        session.set(stage: .signedIn(customerID: customerID, email: email))
        session.confirm(clock.now)
        try await session.secrets.set(
            Data("token".utf8), for: "customer.session-token", protection: .afterFirstUnlockThisDeviceOnly)
        let (cookie, _) = app.sessions.issue(replacing: nil, carrying: session, secure: false, now: clock.now)
        let browser = TestBrowser(server)
        browser.set(cookie: SessionCookie.name, cookie.value)
        return (browser, session)
    }
}
