import Core
import Crypto
import Foundation
import HTTP
import ServerTestSupport
import Store
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

/// The operator's console: staff granted and revoked on the host, and its role checks, asserted on the database.
@Suite("The operator's console lets staff in by role and proof, and nobody else")
struct ConsoleTests {
    static let configuration = TestServer.configuration {
        $0.oidc = true
        $0.publicURL = URL(string: "http://op.test")!
    }
    static let actions = ["disable", "enable", "revoke-sessions", "reset-mfa", "verify-email"]

    /// A browser's cookies for a signed-in account: its session (stepped up with `methods` unless empty) and a
    /// browser cookie; returns them with the console's form token and the user's id.
    static func signedIn(_ server: TestServer, _ email: String, methods: [AuthMethod]) throws
        -> (cookie: String, csrf: String, id: UserID)
    {
        let token = try #require(try server.signUp(email))
        let (id, session) = try server.database.transaction { db -> (UserID, SessionID) in
            let user = try #require(try AccountRepository.find(email: email, on: db))
            let session = try #require(try SessionRepository.live(user.id, on: db).first)
            if !methods.isEmpty {
                _ = try SessionRepository.stepUp(session.id, methods: methods, at: server.nowMillis, on: db)
            }
            return (user.id, session.id)
        }
        let browser = Base64URL.encode(SecureRandom.bytes(32))
        return (
            "tf_session=\(token); tf_browser=\(browser)",
            HostedCookies.csrf(browser: browser, flowID: "console:\(session.raw)"), id
        )
    }

    static func post(_ server: TestServer, _ path: String, cookie: String, _ form: [String: String]) throws
        -> HTTPTestClient.Response
    {
        try server.send(
            "POST", path,
            headers: ["Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"],
            body: Array(HostedBrowser.encode(form).utf8))
    }

    /// What the console may change about `id`, read from the database.
    static func state(_ server: TestServer, _ id: UserID) throws -> String {
        try server.database.transaction { db in
            let user = try #require(try AccountRepository.find(id: id, on: db))
            let live = try SessionRepository.live(id, on: db).filter { $0.endedAt == nil }.count
            let factors = try FactorRepository.list(id, on: db).count
            return
                "disabled=\(user.disabledAt != nil) verified=\(user.emailVerifiedAt != nil) sessions=\(live) factors=\(factors)"
        }
    }

    @Test("staff are granted, listed, re-roled and revoked on the host, each change audited", arguments: Backend.all)
    func grantAndRevoke(backend: Backend) throws {
        try backend.withServer(Self.configuration) { server in
            try server.signUp("ops@example.com")
            let staff = StaffService(transactions: server.services.transactions, clock: server.clock.clock)
            #expect(throws: StaffFailure.noSuchAccount) {
                try staff.grant(email: "nobody@example.com", role: .read, actor: "host:test")
            }
            let granted = try staff.grant(email: "ops@example.com", role: .read, actor: "host:test")
            #expect(granted.role == .read && granted.email == "ops@example.com" && granted.grantedBy == "host:test")
            #expect(try staff.grant(email: "ops@example.com", role: .write, actor: "host:test").role == .write)
            #expect(try staff.list().map(\.role) == [.write])
            try staff.revoke(email: "ops@example.com", actor: "host:test")
            #expect(try staff.list().isEmpty)
            #expect(throws: StaffFailure.notStaff) { try staff.revoke(email: "ops@example.com", actor: "host:test") }
            #expect(
                try server.auditDetails("staff.granted") == ["admin=host:test role=read", "admin=host:test role=write"])
            #expect(try server.auditDetails("staff.revoked") == ["admin=host:test"])
        }
    }

    @Test("a signed-in account that is not staff gets the 403 page with a way out", arguments: Backend.all)
    func notStaff(backend: Backend) throws {
        try backend.withServer(Self.configuration) { server in
            let user = try Self.signedIn(server, "user@example.com", methods: [.otp])
            let page = try server.send("GET", "/console", headers: ["Cookie": user.cookie])
            #expect(page.status == 403)
            #expect(page.text.contains("This account is not staff") && page.text.contains("href=\"/logout\""))
            // Not signed in at all: the hosted sign-in, asking for a second factor.
            let anonymous = try server.send("GET", "/console/users")
            #expect(anonymous.status == 303 && (anonymous.headers["location"] ?? "").hasPrefix("/authorize"))
        }
    }

    @Test(
        "a read-only staff member sees no action and is refused every write, with nothing changed in the database",
        arguments: Backend.all)
    func readOnlyRefused(backend: Backend) throws {
        try backend.withServer(Self.configuration) { server in
            let target = try Self.signedIn(server, "target@example.com", methods: [])
            let reader = try Self.signedIn(server, "reader@example.com", methods: [.hwk])
            let staff = StaffService(transactions: server.services.transactions, clock: server.clock.clock)
            _ = try staff.grant(email: "reader@example.com", role: .read, actor: "host:test")
            let before = try Self.state(server, target.id)
            let page = try server.send("GET", "/console/users/\(target.id.raw)", headers: ["Cookie": reader.cookie])
            #expect(page.status == 200 && page.text.contains("target@example.com"))
            #expect(!page.text.contains("name=\"action\"") && page.text.contains("read-only"))
            for action in Self.actions {
                let answer = try Self.post(
                    server, "/console/users/\(target.id.raw)", cookie: reader.cookie,
                    ["csrf": reader.csrf, "action": action, "reason": "forged"])
                #expect(answer.status == 403 && answer.text.contains("read-only"), "\(action)")
            }
            #expect(try Self.state(server, target.id) == before)
            #expect(try server.auditDetails("staff.refused").count == Self.actions.count)
            let kinds = try server.auditKinds()
            #expect(!kinds.contains { $0.hasPrefix("admin.") && $0 != "admin.read" })
        }
    }

    @Test(
        "a write needs a fresh hardware-bound proof, this browser's token and a reason; then it is audited with both",
        arguments: Backend.all)
    func writeChecks(backend: Backend) throws {
        try backend.withServer(Self.configuration) { server in
            let target = try Self.signedIn(server, "target@example.com", methods: [])
            let staff = StaffService(transactions: server.services.transactions, clock: server.clock.clock)
            let otp = try Self.signedIn(server, "otp@example.com", methods: [.otp])
            let writer = try Self.signedIn(server, "writer@example.com", methods: [.hwk])
            for email in ["otp@example.com", "writer@example.com"] {
                _ = try staff.grant(email: email, role: .write, actor: "host:test")
            }
            let path = "/console/users/\(target.id.raw)"
            let before = try Self.state(server, target.id)
            // A second factor that is not hardware-bound: asked to confirm, nothing done.
            let unproven = try Self.post(
                server, path, cookie: otp.cookie, ["csrf": otp.csrf, "action": "disable", "reason": "support ticket"])
            #expect(unproven.status == 403 && unproven.text.contains("Confirm it"))
            // Another session's token (a stale or forged form), and no reason: nothing done.
            let stale = try Self.post(
                server, path, cookie: writer.cookie, ["csrf": otp.csrf, "action": "disable", "reason": "ticket"])
            #expect(stale.status == 400 && stale.text.contains("This form has expired"))
            let unreasoned = try Self.post(
                server, path, cookie: writer.cookie, ["csrf": writer.csrf, "action": "disable", "reason": "  "])
            #expect(unreasoned.status == 422 && unreasoned.text.contains("Give a reason"))
            #expect(try Self.state(server, target.id) == before)
            let done = try Self.post(
                server, path, cookie: writer.cookie,
                ["csrf": writer.csrf, "action": "disable", "reason": "ticket 42: stolen phone"])
            #expect(done.status == 303 && done.headers["location"] == "\(path)?done=disable")
            #expect(try Self.state(server, target.id).hasPrefix("disabled=true"))
            let detail = try #require(try server.auditDetails("admin.user_disabled").first)
            #expect(
                detail.hasPrefix("admin=staff:\(writer.id.raw) ") && detail.hasSuffix("reason=ticket 42: stolen phone"))
            // Five minutes later the proof is stale: the page offers "Confirm it's you" instead of the actions.
            server.clock.advance(301)
            let later = try server.send("GET", path, headers: ["Cookie": writer.cookie])
            #expect(later.status == 200 && later.text.contains("Confirm it") && !later.text.contains("name=\"action\""))
            let unknown = try server.send("GET", "/console/users/nobody", headers: ["Cookie": writer.cookie])
            #expect(unknown.status == 404 && unknown.text.contains("Find a user"))
        }
    }

    @Test(
        "the audit log pages 50 entries at a time on seq; a kind that does not exist and a session that ended answer pages",
        arguments: Backend.all)
    func auditPaging(backend: Backend) throws {
        try backend.withServer(Self.configuration) { server in
            let reader = try Self.signedIn(server, "reader@example.com", methods: [.otp])
            let staff = StaffService(transactions: server.services.transactions, clock: server.clock.clock)
            _ = try staff.grant(email: "reader@example.com", role: .read, actor: "host:test")
            try server.database.transaction { db in
                for n in 0..<60 {
                    try AuditLog.append(
                        AuditEvent(kind: .signInFailed, outcome: .failure, detail: "n=\(n)"), at: server.nowMillis,
                        on: db)
                }
            }
            let rows = { (page: HTTPTestClient.Response) in
                page.text.components(separatedBy: "<td>signin.failed</td>").count - 1
            }
            let first = try server.send("GET", "/console/audit?kind=signin.failed", headers: ["Cookie": reader.cookie])
            #expect(
                first.status == 200 && rows(first) == 50 && first.text.contains("n=59") && !first.text.contains("n=9<"))
            let older = try #require(
                first.text.range(of: #"/console/audit\?kind=signin.failed&amp;before=\d+"#, options: .regularExpression)
            )
            let next = try server.send(
                "GET", String(first.text[older]).replacingOccurrences(of: "&amp;", with: "&"),
                headers: ["Cookie": reader.cookie])
            #expect(
                next.status == 200 && rows(next) == 10 && next.text.contains("n=0<")
                    && !next.text.contains("Older events"))
            let unknown = try server.send("GET", "/console/audit?kind=nope", headers: ["Cookie": reader.cookie])
            #expect(unknown.status == 422 && unknown.text.contains("not an audit event kind"))
            // Signed out elsewhere: a POST goes back to its page, which starts the sign-in; never a 5xx.
            let token = String(reader.cookie.split(separator: ";")[0].dropFirst("tf_session=".count))
            #expect(
                try server.send("DELETE", "/v1/session", headers: ["Authorization": "Bearer \(token)"]).status == 204)
            let ended = try Self.post(server, "/console/users/someone", cookie: reader.cookie, ["csrf": reader.csrf])
            #expect(ended.status == 303 && ended.headers["location"] == "/console/users/someone")
            let again = try server.send("GET", "/console/users/someone", headers: ["Cookie": reader.cookie])
            #expect(again.status == 303 && (again.headers["location"] ?? "").hasPrefix("/authorize"))
        }
    }

    @Test(
        "a webhook endpoint is disabled by a write staff member with a reason, never by a read-only one",
        arguments: Backend.all)
    func webhookSwitch(backend: Backend) throws {
        try backend.withServer(Self.configuration) { server in
            let reader = try Self.signedIn(server, "reader@example.com", methods: [.hwk])
            let writer = try Self.signedIn(server, "writer@example.com", methods: [.hwk])
            let staff = StaffService(transactions: server.services.transactions, clock: server.clock.clock)
            _ = try staff.grant(email: "reader@example.com", role: .read, actor: "host:test")
            _ = try staff.grant(email: "writer@example.com", role: .write, actor: "host:test")
            var draft = WebhookService.Draft()
            draft.url = "https://hooks.example.com/in"
            draft.eventTypes = ["*"]
            let endpoint = try server.services.webhooks.create(
                draft, audit: AuditContext(ip: "local", userAgent: nil), actor: "host:test"
            ).endpoint
            let path = "/console/webhooks/\(endpoint.id)"
            let page = try server.send("GET", "/console/webhooks", headers: ["Cookie": writer.cookie])
            #expect(page.status == 200 && page.text.contains("hooks.example.com") && page.text.contains(">Disable<"))
            let refused = try Self.post(
                server, path, cookie: reader.cookie, ["csrf": reader.csrf, "status": "disabled", "reason": "x"])
            let afterRefusal = try server.services.webhooks.find(endpoint.id).status
            #expect(refused.status == 403 && afterRefusal == .enabled)
            let done = try Self.post(
                server, path, cookie: writer.cookie,
                ["csrf": writer.csrf, "status": "disabled", "reason": "receiver is down"])
            let afterDone = try server.services.webhooks.find(endpoint.id).status
            #expect(done.status == 303 && afterDone == .disabled)
            let detail = try #require(try server.auditDetails("webhook.updated").last)
            #expect(detail.contains("admin=staff:\(writer.id.raw)") && detail.contains("reason=receiver is down"))
            let unknown = try Self.post(
                server, "/console/webhooks/nope", cookie: writer.cookie,
                ["csrf": writer.csrf, "status": "enabled", "reason": "r"])
            #expect(unknown.status == 404)
        }
    }
}
