import API
import Foundation
import HTTP
import Logging
import ServerTestSupport
import Store
import Synchronization
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

/// The HTTP layer as a client sees it: framing, keep-alive, limits, and
/// problem+json for every protocol error.
@Suite("HTTP platform")
struct HTTPPlatformTests {
    @Test("two requests on one connection are both answered and the connection stays open", arguments: Backend.all)
    func keepAlive(backend: Backend) throws {
        try backend.withServer { server throws in
            let client = try server.client()
            let first = try client.request("GET", "/health")
            #expect(first.status == 200)
            #expect(first.header("connection")?.lowercased() != "close")
            let second = try client.request("GET", "/ready")
            #expect(second.status == 200)
            #expect(try second.decode(HealthStatus.self).status == "ok")
            #expect(first.header("x-request-id") != second.header("x-request-id"))
        }
    }

    @Test("the Date header is the server's clock, once, in IMF-fixdate: devices correct their skew against it")
    func dateHeader() throws {
        try Backend.all[0].withServer(transport: .socket) { server throws in
            let answers = try HTTPFramingTests.exchange(
                server, Array("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
            let dates = try #require(answers.first).headers.filter { $0.0.lowercased() == "date" }.map(\.1)
            // The test clock starts at 2027-01-15T08:00:00Z (1,800,000,000), far from the machine's time.
            #expect(dates == ["Fri, 15 Jan 2027 08:00:00 GMT"])
            server.clock.advance(86_400 * 31 + 3_661)
            #expect(
                try HTTPTestClient(port: server.port).request("GET", "/health").header("date")
                    == "Mon, 15 Feb 2027 09:01:01 GMT")
        }
    }

    @Test("/ready answers 503 once the database is gone, while /health still answers 200")
    func readiness() throws {
        try Backend.all[0].withServer { server throws in
            #expect(try server.get("/ready").status == 200)
            server.database.close()
            // The probe notices within its second.
            #expect(try eventually { try server.get("/ready").status == 503 })
            let ready = try server.get("/ready")
            #expect(ready.status == 503)
            #expect(try ready.decode(HealthStatus.self).status == "unavailable")
            #expect(try server.get("/health").status == 200)
            // A request that needs the database gets a problem, not a hang or a crash.
            let signIn = try server.json(
                "POST", "/v1/sessions", ["email": "a@example.com", "password": "whatever it is"])
            #expect(signIn.status == 503)
            #expect(try signIn.problem.code == "service_unavailable")
        }
    }

    @Test("errors are problem+json with a stable code and the request id", arguments: Backend.all)
    func problems(backend: Backend) throws {
        try backend.withServer { server throws in
            let notFound = try server.get("/no/such/path")
            #expect(notFound.status == 404)
            #expect(notFound.header("content-type") == "application/problem+json")
            #expect(try notFound.problem.code == "not_found")
            #expect(try notFound.problem.type == "urn:trifactor:problem:not_found")
            #expect(try notFound.problem.requestID == notFound.header("x-request-id"))

            let wrongMethod = try server.client().request("PUT", "/v1/accounts", body: [])
            #expect(wrongMethod.status == 405)
            #expect(wrongMethod.header("allow") == "POST")
            #expect(try wrongMethod.problem.code == "method_not_allowed")

            let malformed = try server.client().request(
                "POST", "/v1/sessions", headers: ["Content-Type": "application/json"], body: Array(#"{"email": "#.utf8))
            #expect(malformed.status == 400)
            #expect(try malformed.problem.code == "malformed_json")

            let notJSON = try server.client().request(
                "POST", "/v1/sessions", headers: ["Content-Type": "text/plain"], body: Array("hi".utf8))
            #expect(notJSON.status == 415)
            #expect(try notJSON.problem.code == "unsupported_media_type")

            let missing = try server.json("POST", "/v1/sessions", ["email": "a@example.com"])
            #expect(missing.status == 422)
            #expect(try missing.problem.code == "invalid_fields")
            #expect(try missing.problem.invalidParams?.map(\.name) == ["password"])

            let wrongType = try server.json("POST", "/v1/sessions", ["email": 42, "password": "x"])
            #expect(wrongType.status == 422)
            #expect(try wrongType.problem.invalidParams?.first?.name == "email")
        }
    }

    @Test("a number that does not fit its integer field is an invalid field (422 naming it), not malformed JSON")
    func numbersThatDoNotFit() throws {
        try Backend.all[0].withServer { server throws in
            let user = try MFAClient(server, email: "digits@example.com")
            for digits in ["6.5", "9223372036854775808", "1e308", "-9223372036854775809"] {
                let response = try server.client().request(
                    "POST", "/v1/mfa/enrollments",
                    headers: ["Content-Type": "application/json", "Authorization": "Bearer \(user.token)"],
                    body: Array(#"{"kind":"totp","digits":\#(digits)}"#.utf8))
                #expect(response.status == 422, "digits \(digits)")
                #expect(try response.problem.code == "invalid_fields")
                #expect(try response.problem.invalidParams?.first?.name == "digits")
            }
            // Broken JSON stays malformed, and a fitting number is accepted.
            let broken = try server.client().request(
                "POST", "/v1/mfa/enrollments",
                headers: ["Content-Type": "application/json", "Authorization": "Bearer \(user.token)"],
                body: Array(#"{"kind":"totp","digits":6.5"#.utf8))
            #expect(broken.status == 400)
            #expect(try broken.problem.code == "malformed_json")
            #expect(try user.call("POST", "/v1/mfa/enrollments", ["kind": "totp", "digits": 8]).status == 202)
        }
    }

    @Test("a 2 MiB body is refused with 413 before it is read")
    func bodyTooLarge() throws {
        try Backend.all[0].withServer { server throws in
            let client = try server.client()
            let body = [UInt8](repeating: 0x61, count: 2 * 1024 * 1024)
            try client.send(
                HTTPTestClient.head(
                    "POST", "/v1/accounts", headers: ["Content-Type": "application/json"], contentLength: body.count))
            let response = try client.readResponse()
            #expect(response.status == 413)
            #expect(try response.problem.code == "payload_too_large")
        }
    }

    @Test("a body sent in chunks over the limit without a length is refused with 413")
    func chunkedTooLarge() throws {
        var config = TestServer.configuration()
        config.http.maxBodyBytes = 1024
        try Backend.all[0].withServer(config) { server throws in
            let client = try server.client()
            var raw = HTTPTestClient.head(
                "POST", "/v1/accounts", headers: ["Content-Type": "application/json", "Transfer-Encoding": "chunked"],
                contentLength: nil)
            for _ in 0..<4 { raw += Array("200\r\n".utf8) + [UInt8](repeating: 0x61, count: 512) + Array("\r\n".utf8) }
            raw += Array("0\r\n\r\n".utf8)
            try client.send(raw)
            #expect(try client.readResponse().status == 413)
        }
    }

    @Test("a chunked body far over the limit is cut off instead of read to its end")
    func chunkedFlood() throws {
        var config = TestServer.configuration()
        config.http.maxBodyBytes = 1024
        try Backend.all[0].withServer(config) { server throws in
            let client = try server.client()
            var raw = HTTPTestClient.head(
                "POST", "/v1/accounts", headers: ["Content-Type": "application/json", "Transfer-Encoding": "chunked"],
                contentLength: nil)
            let chunk = Array("10000\r\n".utf8) + [UInt8](repeating: 0x61, count: 0x10000) + Array("\r\n".utf8)
            for _ in 0..<64 { raw += chunk }  // 4 MiB, never terminated
            #expect(throws: (any Error).self) {
                try client.send(raw)
                _ = try client.readResponse()
            }
        }
    }

    @Test(
        "a handler reads the query string exactly as the client sent it (what a provider signed), in process and over a socket",
        arguments: Transport.allCases)
    func rawQuery(transport: Transport) throws {
        let echo: (inout HTTP.Router) -> Void = {
            $0.add("GET", "/test/query") { request in .json(["raw": request.rawQuery, "b": request.query["b"] ?? ""]) }
        }
        try Backend.all[0].withServer(transport: transport, extraRoutes: echo) { server throws in
            let answer = try server.get("/test/query?b=x%20y&a=1&a=2")
            #expect(
                try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: String] == [
                    "raw": "b=x%20y&a=1&a=2", "b": "x y",
                ])
            #expect(
                try JSONSerialization.jsonObject(with: Data(server.get("/test/query").body)) as? [String: String] == [
                    "raw": "", "b": "",
                ])
        }
    }

    @Test("an unexpected error answers 500 without internals, and the log has the request id and the cause")
    func internalError() throws {
        struct Secret: Error { let detail = "connection string with password hunter2" }
        try Backend.all[0].withServer(extraRoutes: { $0.add("GET", "/test/crash") { _ in throw Secret() } }) {
            server throws in
            let response = try server.get("/test/crash")
            #expect(response.status == 500)
            #expect(try response.problem.code == "internal_error")
            #expect(!response.text.contains("hunter2"))
            let id = try #require(response.problem.requestID)
            #expect(
                server.log.all.contains { $0.contains(id) && $0.contains("unhandled_error") && $0.contains("hunter2") })
        }
    }

    @Test("a body that cannot be encoded answers 500 internal_error, never an empty or partial document")
    func unencodableBody() throws {
        let nan: (inout HTTP.Router) -> Void = { $0.add("GET", "/test/nan") { _ in .json(["ratio": Double.nan]) } }
        try Backend.all[0].withServer(extraRoutes: nan) { server throws in
            let response = try server.get("/test/nan")
            #expect(response.status == 500)
            #expect(try response.problem.code == "internal_error")
            let id = try #require(response.problem.requestID)
            #expect(server.log.all.contains { $0.contains(id) && $0.contains("as JSON failed") })
        }
    }

    @Test("slow work beyond the worker queue is refused with 503 and Retry-After")
    func workerQueueBound() throws {
        var config = TestServer.configuration()
        config.http.workerThreads = 1
        config.http.workerQueueLimit = 1
        let slow: (inout HTTP.Router) -> Void = {
            $0.add("GET", "/test/slow", execution: .hashing) { _ in
                usleep(400_000)
                return .noContent
            }
        }
        try Backend.all[0].withServer(config, extraRoutes: slow) { server throws in
            let clients = try (0..<5).map { _ in try server.client() }
            for c in clients { try c.send(HTTPTestClient.head("GET", "/test/slow", headers: [:], contentLength: nil)) }
            let responses = try clients.map { try $0.readResponse() }
            let refused = responses.filter { $0.status == 503 }
            #expect(responses.filter { $0.status == 204 }.count >= 1)
            #expect(refused.count >= 2)
            #expect(try refused.allSatisfy { try $0.header("retry-after") == "1" && $0.problem.code == "overloaded" })
        }
    }

    @Test("stopping while slow work is queued and suspended finishes it without a crash")
    func stopWithSuspended() throws {
        var config = TestServer.configuration()
        config.http.workerThreads = 1
        let slow: (inout HTTP.Router) -> Void = {
            $0.add("GET", "/test/slow", execution: .hashing) { _ in
                usleep(200_000)
                return .noContent
            }
        }
        try Backend.all[0].withServer(config, extraRoutes: slow) { server throws in
            let clients = try (0..<3).map { _ in try server.client() }
            for c in clients { try c.send(HTTPTestClient.head("GET", "/test/slow", headers: [:], contentLength: nil)) }
            usleep(50_000)
            let started = Date()
            server.server.stop(drainTimeout: 0.05)
            // The queued jobs ran (3 × 200 ms on one worker) before libmicrohttpd stopped.
            #expect(Date().timeIntervalSince(started) >= 0.3)
            #expect(server.server.requestsInFlight == 0)
        }
    }

    @Test("fast requests are answered while every worker is busy with slow work")
    func fastDuringSlow() throws {
        var config = TestServer.configuration()
        config.http.workerThreads = 1
        let slow: (inout HTTP.Router) -> Void = {
            $0.add("GET", "/test/slow", execution: .hashing) { _ in
                usleep(1_000_000)
                return .noContent
            }
        }
        try Backend.all[0].withServer(config, extraRoutes: slow) { server throws in
            let busy = try server.client()
            try busy.send(HTTPTestClient.head("GET", "/test/slow", headers: [:], contentLength: nil))
            usleep(100_000)
            let started = Date()
            #expect(try server.get("/health").status == 200)
            #expect(Date().timeIntervalSince(started) < 0.5)
            #expect(try busy.readResponse().status == 204)
        }
    }

    @Test("each request is logged as one JSON line with id, method, path, status and duration")
    func requestLog() throws {
        try Backend.all[0].withServer { server throws in
            let response = try server.get("/health")
            let id = try #require(response.header("x-request-id"))
            #expect(eventually { server.log.all.contains { $0.contains("\"request_id\":\"\(id)\"") } })
            let line = try #require(server.log.all.first { $0.contains("\"request_id\":\"\(id)\"") })
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["method"] as? String == "GET")
            #expect(object["path"] as? String == "/health")
            #expect(object["status"] as? Int == 200)
            #expect(object["duration_ms"] is Double)
        }
    }

    @Test(
        "a W3C traceparent puts its trace id and parent span on the request's log line, over a socket too; a malformed one is ignored",
        arguments: Transport.allCases)
    func traceParent(transport: Transport) throws {
        try Backend.all[0].withServer(transport: transport) { server throws in
            let trace = "4bf92f3577b34da6a3ce929d0e0e4736"
            let parent = "00f067aa0ba902b7"
            let traced = try server.send("GET", "/health", headers: ["traceparent": "00-\(trace)-\(parent)-01"])
            let id = try #require(traced.header("x-request-id"))
            #expect(eventually { server.log.all.contains { $0.contains("\"request_id\":\"\(id)\"") } })
            let line = try #require(server.log.all.first { $0.contains("\"request_id\":\"\(id)\"") })
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["trace_id"] as? String == trace && object["parent_id"] as? String == parent)
            for bad in [
                "00-\(trace)-\(parent)", "00-00000000000000000000000000000000-\(parent)-01", "ff-\(trace)-\(parent)-01",
                "00-\(trace.uppercased())-\(parent)-01", "00-\(trace)-\(parent)-01-extra",
            ] {
                let other = try server.send("GET", "/health", headers: ["traceparent": bad])
                let otherID = try #require(other.header("x-request-id"))
                #expect(eventually { server.log.all.contains { $0.contains("\"request_id\":\"\(otherID)\"") } })
                #expect(
                    server.log.all.first { $0.contains("\"request_id\":\"\(otherID)\"") }?.contains("trace_id")
                        == false, "\(bad)")
            }
        }
    }

    @Test(
        "a call made while serving a traced request continues its trace with a new span; an untraced one starts a trace"
    )
    func traceChild() throws {
        let incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"
        let child = try #require(TraceParent.parse(TraceParent.child(of: incoming)))
        #expect(child.traceID == "4bf92f3577b34da6a3ce929d0e0e4736" && child.parentID != "00f067aa0ba902b7")
        #expect(TraceParent.child(of: incoming).hasSuffix("-00"))
        for header in [nil, "garbage", "00-00000000000000000000000000000000-00f067aa0ba902b7-01"] {
            let fresh = TraceParent.child(of: header)
            let parsed = try #require(TraceParent.parse(fresh), "\(fresh)")
            #expect(parsed.traceID != "00000000000000000000000000000000" && fresh.hasSuffix("-01"))
        }
        #expect(TraceParent.child(of: nil) != TraceParent.child(of: nil))
    }

    @Test("a request line's numbers are written exactly: zero-padded fractions, whole milliseconds, large ones")
    func requestLineNumbers() {
        let lines = Mutex<[String]>([])
        let logger = Logger { line in lines.withLock { $0.append(line) } }
        for millis in [0.05, 2.0, 0.0, 1234.5678, 999_999.9994] {
            logger.request(id: "x-1", method: "GET", path: "/", status: 200, durationMillis: millis, aborted: false)
        }
        let written = lines.withLock { $0 }.map { line in
            String(line.split(separator: ",").first { $0.hasPrefix("\"duration_ms\"") }?.dropFirst(14) ?? "")
        }
        #expect(written == ["0.050", "2.000", "0.000", "1234.568", "999999.999"])
    }

    @Test("every log line is one JSON object with time, level (info, warn or error) and event")
    func logShape() throws {
        try Backend.all[0].withServer { server throws in
            _ = try server.json(
                "POST", "/v1/sessions", ["email": "nobody@example.com", "password": "wrong-password-here"])
            _ = try server.get("/nowhere")
            for line in server.log.all {
                let object = try #require(
                    try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
                #expect(object["time"] is Double && object["event"] is String, "\(line)")
                #expect(["info", "warn", "error"].contains(object["level"] as? String ?? ""), "\(line)")
                #expect(object["id"] == nil, "request and message ids have their own names: \(line)")
            }
        }
    }

    @Test("handlers see the client's address as the kernel reports it")
    func clientAddress() throws {
        let echo: (inout HTTP.Router) -> Void = {
            $0.add("GET", "/test/address") { request in .html(request.remoteAddress) }
        }
        try Backend.all[0].withServer(extraRoutes: echo) { server throws in
            let client = try HTTPTestClient(port: server.port, source: "127.0.0.7")
            try client.send(HTTPTestClient.head("GET", "/test/address", headers: [:], contentLength: nil))
            #expect(try client.readResponse().text == "127.0.0.7")
        }
    }

    @Test("a listen address that is not an IP literal is refused with a sentence that names it")
    func listenAddress() throws {
        var configuration = TestServer.configuration().http
        configuration.host = "localhost"
        let server = HTTPServer(configuration: configuration, router: Router())
        #expect { try server.start() } throws: { error in
            "\(error)".contains("localhost") && "\(error)".contains("not an IPv4 or IPv6 literal")
        }
    }
}
