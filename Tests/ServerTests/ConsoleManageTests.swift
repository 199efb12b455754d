import Core
import Crypto
import Foundation
import ServerTestSupport
import Store
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

/// The console's test numbers and clients: who may change them, what a change does, and what it leaves alone,
/// asserted on the database and the audit log.
@Suite("The operator's console manages test numbers and clients for write staff only")
struct ConsoleManageTests {
    /// A read-only and a write staff member, both signed in with a fresh device-key proof.
    static func staff(_ server: TestServer) throws -> (
        reader: (cookie: String, csrf: String, id: UserID), writer: (cookie: String, csrf: String, id: UserID)
    ) {
        let reader = try ConsoleTests.signedIn(server, "reader@example.com", methods: [.hwk])
        let writer = try ConsoleTests.signedIn(server, "writer@example.com", methods: [.hwk])
        let staff = StaffService(transactions: server.services.transactions, clock: server.clock.clock)
        _ = try staff.grant(email: "reader@example.com", role: .read, actor: "host:test")
        _ = try staff.grant(email: "writer@example.com", role: .write, actor: "host:test")
        return (reader, writer)
    }

    /// The administrators' test numbers and their codes, read from the database.
    static func numbers(_ server: TestServer) throws -> [String: String] {
        let entries = try server.database.transaction { try TestNumberBook.list(configured: [:], on: $0) }
        return Dictionary(uniqueKeysWithValues: entries.map { ($0.number, $0.code) })
    }

    @Test(
        "a test number is added and removed by write staff with a reason; read-only staff and bad input change nothing",
        arguments: Backend.all)
    func testNumbers(backend: Backend) throws {
        try backend.withServer(ConsoleTests.configuration) { server in
            let (reader, writer) = try Self.staff(server)
            let path = "/console/test-numbers"
            _ = try server.services.admin.setTestNumber(
                "15550100", code: "1357",
                actor: AdminService.Actor(name: "host:test", client: AuditContext(ip: "local", userAgent: nil))
            )
            let readerPage = try server.send("GET", path, headers: ["Cookie": reader.cookie])
            #expect(readerPage.status == 200 && readerPage.text.contains("+15550100"))
            #expect(!readerPage.text.contains(">Add test number<") && !readerPage.text.contains("Remove</button>"))
            // Read-only: both writes refused and audited, nothing changed.
            let add = [
                "csrf": reader.csrf, "action": "add", "number": "+44 7700 900123", "code": "2468", "reason": "x",
            ]
            #expect(try ConsoleTests.post(server, path, cookie: reader.cookie, add).status == 403)
            let remove = ["csrf": reader.csrf, "action": "remove", "number": "15550100", "reason": "x"]
            #expect(try ConsoleTests.post(server, path, cookie: reader.cookie, remove).status == 403)
            #expect(try Self.numbers(server) == ["15550100": "1357"])
            #expect(try server.auditDetails("staff.refused").count == 2)
            // Bad input answers the page with the error next to its field (422); nothing changed.
            let writerPage = try server.send("GET", path, headers: ["Cookie": writer.cookie])
            #expect(writerPage.text.contains(">Add test number<") && writerPage.text.contains("Remove</button>"))
            // (the form, the error's field, what it says)
            let bad: [([String: String], String, String)] = [
                (["number": "call me", "code": "2468", "reason": "QA"], "number", "with its country code"),
                (["number": "+1 555", "code": "2468", "reason": "QA"], "number", "with its country code"),
                (["number": "+44 7700 900123", "code": "2!", "reason": "QA"], "code", "4 to 10 letters or digits"),
                (["number": "+44 7700 900123", "code": "2468", "reason": " "], "reason", "Give a reason"),
            ]
            for (fields, field, error) in bad {
                var form = fields
                form["csrf"] = writer.csrf
                form["action"] = "add"
                let answer = try ConsoleTests.post(server, path, cookie: writer.cookie, form)
                let said = try #require(
                    answer.text.range(of: #"id="f-\#(field)-error"[^>]*>[^<]*"#, options: .regularExpression))
                #expect(answer.status == 422 && answer.text[said].contains(error), "\(fields)")
            }
            #expect(try Self.numbers(server) == ["15550100": "1357"])
            #expect(try server.auditDetails("admin.test_number_set").count == 1)
            // A write staff member with a fresh proof: added, then removed, each audited with the reason.
            let added = try ConsoleTests.post(
                server, path, cookie: writer.cookie,
                [
                    "csrf": writer.csrf, "action": "add", "number": "+44 7700 900123", "code": "2468",
                    "reason": "QA phone",
                ])
            #expect(added.status == 303 && added.headers["location"] == "\(path)?done=added")
            #expect(try Self.numbers(server) == ["15550100": "1357", "447700900123": "2468"])
            #expect(
                try server.auditDetails("admin.test_number_set").contains(
                    "admin=staff:\(writer.id.raw) number=447700900123 reason=QA phone"))
            let removed = try ConsoleTests.post(
                server, path, cookie: writer.cookie,
                ["csrf": writer.csrf, "action": "remove", "number": "15550100", "reason": "QA is done"])
            #expect(removed.status == 303 && removed.headers["location"] == "\(path)?done=removed")
            #expect(try Self.numbers(server) == ["447700900123": "2468"])
            #expect(
                try server.auditDetails("admin.test_number_removed") == [
                    "admin=staff:\(writer.id.raw) number=15550100 reason=QA is done"
                ])
            let gone = try ConsoleTests.post(
                server, path, cookie: writer.cookie,
                ["csrf": writer.csrf, "action": "remove", "number": "15550100", "reason": "again"])
            #expect(gone.status == 404)
        }
    }

    @Test(
        "a client's page shows its metadata; write staff rotate its secret (shown once) and delete it, read-only staff cannot, and the built-in client is never found",
        arguments: Backend.all)
    func clients(backend: Backend) throws {
        try backend.withServer(ConsoleTests.configuration) { server in
            let (reader, writer) = try Self.staff(server)
            let host = AuditContext(ip: "local", userAgent: nil)
            var draft = ClientService.Draft()
            draft.name = "Shop"
            draft.redirectURIs = ["https://shop.example.com/callback"]
            let shop = try server.services.clients.create(draft, by: .host, client: host, actor: "host:test").client
            draft.name = "Kiosk"
            draft.authMethod = "none"
            let kiosk = try server.services.clients.create(draft, by: .host, client: host, actor: "host:test").client
            let path = "/console/clients/\(shop.id)"
            let stored = { try server.services.clients.find(shop.id) }
            let list = try server.send("GET", "/console/clients", headers: ["Cookie": reader.cookie])
            #expect(
                list.status == 200 && list.text.contains("href=\"\(path)\"") && !list.text.contains(OwnPages.clientID))
            let page = try server.send("GET", path, headers: ["Cookie": reader.cookie])
            #expect(page.status == 200 && page.text.contains("https://shop.example.com/callback"))
            #expect(page.text.contains("client_secret_basic") && page.text.contains("trifactord clients update"))
            #expect(!page.text.contains("name=\"action\""))
            for action in ["rotate-secret", "delete"] {
                let refused = try ConsoleTests.post(
                    server, path, cookie: reader.cookie,
                    ["csrf": reader.csrf, "action": action, "confirm": shop.id, "reason": "forged"])
                #expect(refused.status == 403, "\(action)")
            }
            #expect(try stored()?.secretHash == shop.secretHash)
            #expect(try server.auditDetails("oidc.client_updated").isEmpty)
            // Write staff: the secret is rotated and shown once, on a page no cache keeps.
            let writerPage = try server.send("GET", path, headers: ["Cookie": writer.cookie])
            #expect(writerPage.text.contains(">Rotate secret<") && writerPage.text.contains(">Delete client<"))
            let kioskPage = try server.send("GET", "/console/clients/\(kiosk.id)", headers: ["Cookie": writer.cookie])
            #expect(kioskPage.status == 200 && !kioskPage.text.contains(">Rotate secret<"))
            let rotated = try ConsoleTests.post(
                server, path, cookie: writer.cookie,
                ["csrf": writer.csrf, "action": "rotate-secret", "reason": "leaked in a log"])
            #expect(rotated.status == 200 && (rotated.headers["cache-control"] ?? "").contains("no-store"))
            let secret = try #require(
                rotated.text.range(of: #"id="secret">[A-Za-z0-9_-]{43}<"#, options: .regularExpression))
            #expect(try stored()?.secretHash == SHA256.hex(String(rotated.text[secret].suffix(44).dropLast())))
            #expect(
                try server.auditDetails("oidc.client_updated") == [
                    "client=\(shop.id) secret rotated by=admin=staff:\(writer.id.raw) reason=leaked in a log"
                ])
            // Delete asks for the id typed again and a reason; nothing is deleted without them.
            let unconfirmed = try ConsoleTests.post(
                server, path, cookie: writer.cookie, ["csrf": writer.csrf, "action": "delete", "reason": "retired"])
            #expect(unconfirmed.status == 422 && unconfirmed.text.contains("Type the client id"))
            let unreasoned = try ConsoleTests.post(
                server, path, cookie: writer.cookie, ["csrf": writer.csrf, "action": "delete", "confirm": shop.id])
            #expect(unreasoned.status == 422 && unreasoned.text.contains("Give a reason"))
            #expect(try stored() != nil)
            let deleted = try ConsoleTests.post(
                server, path, cookie: writer.cookie,
                ["csrf": writer.csrf, "action": "delete", "confirm": shop.id, "reason": "shop retired"])
            #expect(deleted.status == 303 && deleted.headers["location"] == "/console/clients?done=deleted")
            #expect(try stored() == nil)
            #expect(
                try server.auditDetails("oidc.client_deleted") == [
                    "client=\(shop.id) by=admin=staff:\(writer.id.raw) reason=shop retired"
                ])
            // The hosted pages' own client is neither shown nor changed.
            let builtIn = "/console/clients/\(OwnPages.clientID)"
            #expect(try server.send("GET", builtIn, headers: ["Cookie": writer.cookie]).status == 404)
            for action in ["rotate-secret", "delete"] {
                let answer = try ConsoleTests.post(
                    server, builtIn, cookie: writer.cookie,
                    ["csrf": writer.csrf, "action": action, "confirm": OwnPages.clientID, "reason": "try"])
                #expect(answer.status == 404, "\(action)")
            }
            #expect(try server.database.transaction { try ClientRepository.find(OwnPages.clientID, on: $0) } != nil)
        }
    }
}

extension ConsoleManageTests {
    @Test("an old passkey session refreshed by an app code later is not a fresh hardware-bound proof")
    func oldPasskeyThenAppCode() throws {
        try Backend.all[0].withServer(ConsoleTests.configuration) { server in
            let target = try ConsoleTests.signedIn(server, "t2@example.com", methods: [])
            let writer = try ConsoleTests.signedIn(server, "w2@example.com", methods: [.hwk])
            _ = try StaffService(transactions: server.services.transactions, clock: server.clock.clock)
                .grant(email: "w2@example.com", role: .write, actor: "host:test")
            server.clock.advance(3600)
            // A step-up with an authenticator code an hour later refreshes the second-factor time, not the passkey's.
            try server.database.transaction { db in
                let user = try #require(try AccountRepository.find(email: "w2@example.com", on: db))
                let session = try #require(try SessionRepository.live(user.id, on: db).first)
                _ = try SessionRepository.stepUp(session.id, methods: [.otp], at: server.nowMillis, on: db)
            }
            let before = try ConsoleTests.state(server, target.id)
            let refused = try ConsoleTests.post(
                server, "/console/users/\(target.id.raw)", cookie: writer.cookie,
                ["csrf": writer.csrf, "action": "disable", "reason": "ticket 7"])
            #expect(refused.status == 403 && refused.text.contains("Confirm it"))
            #expect(try ConsoleTests.state(server, target.id) == before)
        }
    }
}

extension ConsoleManageTests {
    @Test("staff act neither on their own account nor on another staff member's")
    func notOnStaff() throws {
        try Backend.all[0].withServer(ConsoleTests.configuration) { server in
            let writer = try ConsoleTests.signedIn(server, "w3@example.com", methods: [.hwk])
            let other = try ConsoleTests.signedIn(server, "r3@example.com", methods: [])
            let staff = StaffService(transactions: server.services.transactions, clock: server.clock.clock)
            _ = try staff.grant(email: "w3@example.com", role: .write, actor: "host:test")
            _ = try staff.grant(email: "r3@example.com", role: .read, actor: "host:test")
            for target in [writer.id, other.id] {
                let before = try ConsoleTests.state(server, target)
                let refused = try ConsoleTests.post(
                    server, "/console/users/\(target.raw)", cookie: writer.cookie,
                    ["csrf": writer.csrf, "action": "reset-mfa", "reason": "ticket 8"])
                #expect(refused.status == 403 && refused.text.contains("Nothing was changed"))
                #expect(try ConsoleTests.state(server, target) == before)
            }
            #expect(try server.auditDetails("staff.refused").filter { $0.contains("account: reset-mfa") }.count == 2)
        }
    }
}
