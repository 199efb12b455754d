import API
import Foundation
import ServerTestSupport
import Store
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

@Suite("The session limit and the paged session list")
struct SessionLimitTests {
    @Test(
        "a sign-in beyond the user's session limit ends the oldest, which stops working, and the audit log says why",
        arguments: Backend.all)
    func oldestEnds(backend: Backend) throws {
        try backend.withServer(TestServer.configuration { $0.maxSessionsPerUser = 5 }) { server throws in
            var tokens = [try #require(try server.signUp("many@example.com"))]
            for _ in 0..<6 {
                server.clock.advance(1)
                tokens.append(
                    try server.json(
                        "POST", "/v1/sessions", ["email": "many@example.com", "password": "correct horse battery"]
                    )
                    .decode(SessionCreated.self).token)
            }
            // Other copies of a session drop it within their one-second reload.
            server.clock.advance(2)
            let statuses = try tokens.map { try server.get("/v1/session", token: $0).status }
            #expect(statuses == [401, 401, 200, 200, 200, 200, 200])
            #expect(try server.get("/v1/sessions", token: tokens[6]).decode(SessionList.self).sessions.count == 5)
            let ended = try server.database.read {
                try $0.query("SELECT detail FROM audit_log WHERE kind = 'session.revoked'", [])
            }
            #expect(try ended.map { try $0.text("detail") }.filter { $0.hasSuffix("reason=session_limit") }.count == 2)
            // Sign-ins in the same millisecond: each new session lives, whatever its id's place in the order.
            var same: [String] = []
            for _ in 0..<8 {
                same.append(
                    try server.json(
                        "POST", "/v1/sessions", ["email": "many@example.com", "password": "correct horse battery"]
                    )
                    .decode(SessionCreated.self).token)
                #expect(try server.get("/v1/session", token: same.last!).status == 200)
            }
            #expect(try server.get("/v1/sessions", token: same.last!).decode(SessionList.self).sessions.count == 5)
        }
    }

    @Test(
        "the session list comes in pages, newest first, that together hold every live session once; a bad limit or cursor is a 422",
        arguments: Backend.all)
    func pages(backend: Backend) throws {
        try backend.withServer { server throws in
            var tokens = [try #require(try server.signUp("pages@example.com"))]
            for _ in 0..<6 {
                server.clock.advance(1)
                tokens.append(
                    try server.json(
                        "POST", "/v1/sessions", ["email": "pages@example.com", "password": "correct horse battery"]
                    )
                    .decode(SessionCreated.self).token)
            }
            let me = tokens[3]
            var seen: [SessionSummary] = []
            var after: String?
            var pages = 0
            repeat {
                let page = try server.get("/v1/sessions?limit=3" + (after.map { "&after=\($0)" } ?? ""), token: me)
                    .decode(SessionList.self)
                #expect(page.sessions.count <= 3)
                seen += page.sessions
                after = page.next
                pages += 1
            } while after != nil && pages < 10
            #expect(pages == 3)
            #expect(Set(seen.map(\.id)).count == 7)
            #expect(seen.map(\.createdAt) == seen.map(\.createdAt).sorted(by: >))
            #expect(seen.filter(\.current).count == 1)
            for bad in ["limit=0", "limit=101", "limit=many", "after=yesterday", "after=1.not-a-session"] {
                let r = try server.get("/v1/sessions?\(bad)", token: me)
                #expect(r.status == 422, "\(bad)")
                #expect(try r.problem.code == "invalid_fields", "\(bad)")
            }
        }
    }
}

extension SessionLimitTests {
    @Test("each listed session names its browser and system as people read them, and so does the new-device email")
    func deviceNames() throws {
        try Backend.all[0].withServer { server throws in
            let token = try #require(try server.signUp("names@example.com"))
            let chrome =
                "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"
            let body = Array(
                try JSONSerialization.data(withJSONObject: [
                    "email": "names@example.com", "password": "correct horse battery",
                ]))
            #expect(
                try server.send(
                    "POST", "/v1/sessions", headers: ["Content-Type": "application/json", "User-Agent": chrome],
                    body: body
                ).status == 201)
            let devices = try server.get("/v1/sessions", token: token).decode(SessionList.self).sessions.map(\.device)
            #expect(devices.contains("Chrome on Linux") && devices.contains("Unknown browser"))
            #expect(try server.outbox(to: "names@example.com").contains { $0.text.contains("from Chrome on Linux at") })
        }
    }
}
