import API
import Core
import Crypto
import Foundation
import ServerTestSupport
import Store
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

@Suite("Erasing a user")
struct ErasureTests {
    static let email = "erin.erasure@example.com"
    static let phone = "447400123470"
    static let name = "Erin Erasure"
    static let userAgent = "ErasureProbe/7.3 (a browser only Erin uses)"

    /// A request from Erin's browser.
    static func call(
        _ server: TestServer, _ method: String, _ path: String, _ body: [String: Any]? = nil,
        token: String? = nil, key: String? = nil
    ) throws -> HTTPTestClient.Response {
        var headers = ["User-Agent": userAgent]
        if let key { headers["Idempotency-Key"] = key }
        if let token { headers["Authorization"] = "Bearer \(token)" }
        var bytes: [UInt8] = []
        if let body {
            headers["Content-Type"] = "application/json"
            bytes = Array(try JSONSerialization.data(withJSONObject: body))
        }
        return try server.send(method, path, headers: headers, body: bytes)
    }

    /// Every text-readable cell of every table that holds `needle`, as `table.column`.
    static func cells(holding needle: String, in database: any Database) throws -> [String] {
        try database.read { db in
            let columns: [(table: String, column: String)]
            if database.dialect == .sqlite {
                columns = try db.query(
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'", []
                ).flatMap { row in
                    let table = try row.text("name")
                    return try db.query("SELECT name FROM pragma_table_info($1)", [.text(table)]).map {
                        (table, try $0.text("name"))
                    }
                }
            } else {
                columns = try db.query(
                    """
                    SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()
                    """, []
                ).map { (try $0.text("table_name"), try $0.text("column_name")) }
            }
            return try columns.filter { table, column in
                try db.queryOne(
                    "SELECT COUNT(*) AS n FROM \(table) WHERE CAST(\(column) AS TEXT) LIKE $1", [.text("%\(needle)%")])?
                    .int("n") ?? 0 > 0
            }.map { "\($0.table).\($0.column)" }
        }
    }

    @Test(
        "after erasure no column of any table holds the user's email, its hash, phone, id, name or user agent; the audit trail stays, pseudonymised",
        arguments: Backend.all)
    func nothingLeft(backend: Backend) throws {
        try backend.withServer { server throws in
            let password = "correct horse battery"
            #expect(
                try Self.call(
                    server, "POST", "/v1/accounts",
                    ["email": Self.email, "password": password, "display_name": Self.name]
                ).status == 202)
            #expect(
                try Self.call(server, "POST", "/v1/accounts/verify-email/resend", ["email": Self.email]).status == 202)
            let code = try #require(try server.lastCode(to: Self.email))
            #expect(
                try Self.call(server, "POST", "/v1/accounts/verify-email", ["email": Self.email, "code": code]).status
                    == 200)
            // A wrong password first: the address's lockout count.
            #expect(
                try Self.call(server, "POST", "/v1/sessions", ["email": Self.email, "password": "not the password"])
                    .status == 401)
            let token = try Self.call(server, "POST", "/v1/sessions", ["email": Self.email, "password": password])
                .decode(SessionCreated.self).token
            let started = try Self.call(
                server, "POST", "/v1/mfa/enrollments", ["kind": "phone", "phone": "+" + Self.phone], token: token)
            let session = try started.decode(EnrollmentStarted.self).enrollmentSession
            server.tick()
            let enrolmentCode = try #require(try server.lastCode(to: Self.phone))
            let factor = try Self.call(
                server, "POST", "/v1/mfa/enrollments/\(session)", ["code": enrolmentCode], token: token
            )
            .decode(EnrolledFactor.self).enrollmentID
            // A sign-in with the phone, one wrong code first (the number's wrong-code count, its rate-limit buckets).
            let pending = try Self.call(server, "POST", "/v1/sessions", ["email": Self.email, "password": password])
                .decode(MFARequired.self).pendingCredential
            // With a key: the kept answer of an anonymous request goes with the user it acted for.
            #expect(
                try Self.call(
                    server, "POST", "/v1/mfa/sign-in/challenges",
                    ["pending_credential": pending, "enrollment_id": factor],
                    key: UUID().uuidString
                ).status == 202)
            server.tick()
            let signInCode = try #require(try server.lastCode(to: Self.phone))
            let wrong = signInCode == "000000" ? "111111" : "000000"
            #expect(
                try Self.call(
                    server, "POST", "/v1/sessions/mfa",
                    ["pending_credential": pending, "enrollment_id": factor, "code": wrong]
                ).status == 400)
            #expect(
                try Self.call(
                    server, "POST", "/v1/sessions/mfa",
                    ["pending_credential": pending, "enrollment_id": factor, "code": signInCode]
                ).status == 201)
            let id = try server.get("/v1/session", token: token).decode(CurrentSession.self).user.id
            let needles = [Self.email, SHA256.hex(Self.email), Self.phone, id, Self.name, Self.userAgent]
            // As rows written before verifications named their user: neither the verification nor its audit entries say whose.
            try server.database.transaction { db in
                try db.execute("UPDATE verify_requests SET user_id = NULL", [])
                try db.execute("UPDATE audit_log SET user_id = NULL WHERE kind LIKE 'verify.%'", [])
            }
            // A resend still queued when the account goes.
            #expect(
                try Self.call(server, "POST", "/v1/accounts/verify-email/resend", ["email": Self.email]).status == 202)
            #expect(
                try Self.cells(holding: Self.phone, in: server.database).contains("verify_requests.steps"),
                "the probe sees the data before")
            #expect(try Self.cells(holding: Self.userAgent, in: server.database).contains("audit_log.user_agent"))

            _ = try server.services.admin.delete(
                UserID(id), actor: .init(name: "ops", client: AuditContext(ip: "10.0.0.9", userAgent: "admin-console")))
            server.tick()
            for needle in needles {
                #expect(try Self.cells(holding: needle, in: server.database) == [], "\(needle)")
            }
            // Kept answers are base64, out of the probe's reach: none may be left at all.
            #expect(
                try server.database.read { try $0.queryOne("SELECT COUNT(*) AS n FROM idempotency_keys", [])?.int("n") }
                    == 0)
            // The trail of what happened stays, under a pseudonym, without addresses or user agents.
            let trail = try server.database.read {
                try $0.query("SELECT kind, ip FROM audit_log WHERE user_id LIKE 'erased-%'", [])
            }
            #expect(trail.count > 8)
            #expect(try trail.allSatisfy { try $0.optionalText("ip") == nil })
            #expect(try trail.map { try $0.text("kind") }.contains("verify.completed"))
        }
    }
}
