import API
import Core
import Crypto
import Foundation
import HTTP
import ServerTestSupport
import Store
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

/// The security page (`/account`) and the built-in client it signs in through, asserted on the database: what a
/// change needs (this browser's form token, a fresh second factor) and what "This wasn't me" does.
@Suite("The security page changes an account only with its token and a fresh proof")
struct SecurityPageTests {
    static let configuration = TestServer.configuration {
        $0.oidc = true
        $0.publicURL = URL(string: "http://op.test")!
    }

    /// A user with an authenticator app, signed in with it just now, as a browser's cookies and the page's token.
    static func signedIn(_ server: TestServer, _ email: String) throws
        -> (user: MFAClient, cookie: String, csrf: String, factor: String)
    {
        let user = try MFAClient(server, email: email)
        let factor = try user.enrollTOTP()
        try user.stepUp(factor)
        let session = try server.database.transaction { db in
            try #require(try SessionRepository.find(tokenHash: SHA256.hex(user.token), on: db)).id
        }
        let browser = Base64URL.encode(SecureRandom.bytes(32))
        return (
            user, "tf_session=\(user.token); tf_browser=\(browser)",
            HostedCookies.csrf(browser: browser, flowID: "account:\(session.raw)"), factor.id
        )
    }

    static func post(_ server: TestServer, _ path: String, cookie: String, _ form: [String: String]) throws
        -> HTTPTestClient.Response
    {
        try server.send(
            "POST", path, headers: ["Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"],
            body: Array(HostedBrowser.encode(form).utf8))
    }

    static func factors(_ server: TestServer, _ email: String) throws -> Int {
        try server.database.transaction { db in
            let user = try #require(try AccountRepository.find(email: email, on: db))
            return try FactorRepository.list(user.id, on: db).count
        }
    }

    @Test(
        "'This wasn't me' replaces the password, ends every session and emails the owner; the same password is refused",
        arguments: Backend.all)
    func notMe(backend: Backend) throws {
        try backend.withServer(Self.configuration) { server in
            let (user, cookie, csrf, _) = try Self.signedIn(server, "ann@example.com")
            let other = try server.json(
                "POST", "/v1/sessions", ["email": "ann@example.com", "password": user.password])
            #expect(other.status == 200 || other.status == 201)
            let same = try Self.post(
                server, "/account/not-me", cookie: cookie, ["csrf": csrf, "password": user.password])
            #expect(same.status == 422 && same.text.contains("different from your current one"))
            #expect(try server.get("/v1/session", token: user.token).status == 200, "a refusal changed nothing")
            let forged = try Self.post(
                server, "/account/not-me", cookie: cookie, ["csrf": String(repeating: "0", count: 64), "password": "x"])
            #expect(forged.status == 400)

            // A factor the intruder added (ticked on the page) goes with it; the owner's own stays.
            let intruder = try user.enrollTOTP(name: "Not mine")
            let done = try Self.post(
                server, "/account/not-me", cookie: cookie,
                ["csrf": csrf, "password": "a brand new passphrase 42", "remove-\(intruder.id)": "1"])
            #expect(done.status == 200 && done.text.contains("Your account is secured"))
            #expect(done.header("set-cookie")?.contains("tf_session=;") == true)
            let live = try server.database.transaction { db in
                try db.query("SELECT end_reason FROM sessions WHERE ended_at IS NULL OR end_reason = 'reported_not_me'")
                    .map { try $0.optionalText("end_reason") }
            }
            #expect(!live.isEmpty && live.allSatisfy { $0 == "reported_not_me" }, "a session is still live: \(live)")
            #expect(try server.get("/v1/session", token: user.token).status == 401)
            let old = try server.json("POST", "/v1/sessions", ["email": "ann@example.com", "password": user.password])
            #expect(old.status == 401)
            let new = try server.json(
                "POST", "/v1/sessions", ["email": "ann@example.com", "password": "a brand new passphrase 42"])
            #expect(new.status == 200 || new.status == 201)
            #expect(try server.outbox(to: "ann@example.com").contains { $0.text.contains("was not you") })
            #expect(try server.auditKinds().contains("account.reported_not_me"))
            let left = try server.database.transaction { db in
                try FactorRepository.list(
                    try #require(try AccountRepository.find(email: "ann@example.com", on: db)).id, on: db)
            }
            #expect(left.map(\.displayName) == ["Phone app"])
            #expect(try server.auditDetails("mfa.removed").contains { $0.contains("reported not me") })
        }
    }

    @Test("removing a factor needs this browser's token and a second factor proven within the window")
    func removalNeedsAFreshProof() throws {
        try Backend.all[0].withServer(Self.configuration) { server in
            let (_, cookie, csrf, factor) = try Self.signedIn(server, "bo@example.com")
            let forged = try Self.post(
                server, "/account/remove", cookie: cookie,
                ["csrf": String(repeating: "1", count: 64), "factor": factor])
            #expect(forged.status == 400 && forged.text.contains("out of date"))
            server.clock.advance(301)
            let stale = try Self.post(server, "/account/remove", cookie: cookie, ["csrf": csrf, "factor": factor])
            #expect(stale.status == 200 && stale.text.contains("Confirm it"))
            #expect(try Self.factors(server, "bo@example.com") == 1, "removed without a fresh proof")
            // The confirmation signs in again through the built-in client, asking for a new proof (max_age=0).
            let confirm = try Self.post(
                server, "/account/confirm", cookie: cookie,
                ["csrf": csrf, "then": "/account/remove?factor=\(factor)"])
            #expect(confirm.status == 303)
            #expect(confirm.header("location")?.hasPrefix("/authorize/sign-in?flow=") == true)
            let flow = try server.database.transaction { db in
                try db.queryOne("SELECT client_id, request FROM oidc_flows ORDER BY created_at DESC LIMIT 1")
            }
            #expect(try flow?.text("client_id") == OwnPages.clientID)
            #expect(try flow?.text("request").contains("\"maxAge\":0") == true)
        }
    }

    @Test("the built-in client is written at start, and can be neither named in a link nor changed nor deleted")
    func builtInClient() throws {
        try Backend.all[0].withServer(Self.configuration) { server in
            let clients = server.services.clients
            #expect(try clients.list().allSatisfy { $0.id != OwnPages.clientID })
            let stored = try server.database.transaction { try ClientRepository.find(OwnPages.clientID, on: $0) }
            #expect(stored?.redirectURIs == ["http://op.test/account", "http://op.test/console"])
            #expect(stored?.firstParty == true && stored?.authMethod == OIDCClient.AuthMethod.none)
            #expect(throws: ClientFailure.notFound) {
                try clients.delete(
                    OwnPages.clientID, client: AuditContext(ip: "127.0.0.1", userAgent: nil), actor: "test")
            }
            #expect(try server.database.transaction { try ClientRepository.find(OwnPages.clientID, on: $0) } != nil)
            let linked = try server.get(
                "/authorize?client_id=trifactor%3Apages&redirect_uri=http%3A%2F%2Fop.test%2Faccount&response_type=code&scope=openid"
            )
            #expect(linked.status == 400 && linked.text.contains("not registered"))
            // Signed out, the page starts the built-in client's sign-in; a return address elsewhere is never kept.
            let start = try server.get("/account")
            #expect(start.status == 303 && start.header("location")?.hasPrefix("/authorize/sign-in?flow=") == true)
            #expect(!OwnPages.isReturn("//evil.example/account", under: "/account"))
            #expect(!OwnPages.isReturn("/accounts", under: "/account"))
            #expect(!OwnPages.isReturn("/account/\\evil", under: "/account"))
            #expect(OwnPages.isReturn("/account/remove?factor=abc", under: "/account"))
            #expect(!OwnPages.isReturn("/console/../authorize?client_id=x", under: "/console"))
            #expect(!OwnPages.isReturn("/console/%2e%2e/authorize", under: "/console"))
            #expect(OwnPages.isReturn("/console/users?q=a%40b.example", under: "/console"))
            // Nor does it authenticate anywhere: /token and /par answer as for an unknown client.
            let token = try server.send(
                "POST", "/token", headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: Array("grant_type=authorization_code&code=x&client_id=trifactor%3Apages".utf8))
            #expect(token.status == 401 && token.text.contains("invalid_client"))
        }
    }

    @Test("a form for new recovery codes sent again (a reload after they were shown) makes no second set")
    func codesOnce() throws {
        try Backend.all[0].withServer(Self.configuration) { server in
            let (_, cookie, csrf, _) = try Self.signedIn(server, "cy@example.com")
            let first = try Self.post(
                server, "/account/recovery-codes", cookie: cookie, ["csrf": csrf, "replaces": "none"])
            #expect(first.status == 200 && first.text.contains("Your new recovery codes"))
            let set = try server.database.transaction { db in
                try db.queryOne("SELECT id FROM mfa_factors WHERE kind = 'recovery_code'")?.text("id")
            }
            let again = try Self.post(
                server, "/account/recovery-codes", cookie: cookie, ["csrf": csrf, "replaces": "none"])
            #expect(again.status == 200 && again.text.contains("already made from this page"))
            let after = try server.database.transaction { db in
                try db.queryOne("SELECT id FROM mfa_factors WHERE kind = 'recovery_code'")?.text("id")
            }
            #expect(set != nil && after == set, "a second set replaced the one shown")
        }
    }
}
