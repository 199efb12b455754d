import API
import Foundation
import HTTP
import ServerTestSupport
import Store
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

@Suite("Accounts and email verification")
struct AccountsTests {
    @Test(
        "sign-up answers 202 and sends a 6-digit code; the email is stored normalised",
        arguments: Backend.all, Transport.allCases)
    func signUp(backend: Backend, transport: Transport) throws {
        try backend.withServer(transport: transport) { server throws in
            let response = try server.json(
                "POST", "/v1/accounts",
                ["email": "  Ann@Example.COM ", "password": "correct horse battery", "display_name": "Ann"])
            #expect(response.status == 202)
            #expect(try response.decode(VerificationSent.self).status == "verification_sent")
            #expect(try server.lastCode(to: "Ann@example.com")?.count == 6)
            let users = try server.database.transaction { try AccountRepository.list(limit: 10, on: $0) }
            #expect(users.map(\.email) == ["Ann@example.com"])
            #expect(users.first?.passwordHash.hasPrefix("$argon2id$") == true)
            #expect(try server.auditKinds() == ["account.created", "email.verification_sent"])
        }
    }

    @Test(
        "signing up with a registered email answers the same, warns the owner and changes nothing",
        arguments: Backend.all)
    func noEnumeration(backend: Backend) throws {
        try backend.withServer { server throws in
            let first = try server.json(
                "POST", "/v1/accounts", ["email": "bob@example.com", "password": "correct horse battery"])
            let second = try server.json(
                "POST", "/v1/accounts", ["email": "BOB@example.com".lowercased(), "password": "another fine password"])
            #expect(first.status == second.status)
            #expect(first.text == second.text)
            #expect(try server.lastMessage(to: "bob@example.com")?.contains("Someone tried to create") == true)
            // The original password still works; the second one does not.
            #expect(
                try server.json(
                    "POST", "/v1/sessions", ["email": "bob@example.com", "password": "correct horse battery"]
                ).status == 201)
            #expect(
                try server.json(
                    "POST", "/v1/sessions", ["email": "bob@example.com", "password": "another fine password"]
                ).status == 401)
            let count = try server.database.transaction { try AccountRepository.list(limit: 10, on: $0) }.count
            #expect(count == 1)
        }
    }

    @Test("weak, short, overlong and email-like passwords and bad emails are refused with the field names")
    func validation() throws {
        try Backend.all[0].withServer { server throws in
            func reasons(_ body: [String: Any]) -> [String: String] {
                guard let r = try? server.json("POST", "/v1/accounts", body) else { return [:] }
                #expect(r.status == 422)
                let refused = (try? r.problem.invalidParams) ?? nil
                #expect(refused != nil)
                return Dictionary(uniqueKeysWithValues: (refused ?? []).map { ($0.name, $0.reason) })
            }
            #expect(
                reasons(["email": "a@example.com", "password": "short"])["password"]?.contains("at least 8") == true)
            #expect(
                reasons(["email": "a@example.com", "password": "password1"])["password"]?.contains("common") == true)
            #expect(
                reasons(["email": "a@example.com", "password": "PASSWORD1"])["password"]?.contains("common") == true)
            // Not in the bundled list, but in cracklib's dictionary, as it is or taken apart.
            for password in ["qwerty123", "Sunshine!", "football12", "Passw0rd"] {
                #expect(
                    reasons(["email": "a@example.com", "password": password])["password"]?.contains("common") == true,
                    "\(password)")
            }
            #expect(
                reasons(["email": "a@example.com", "password": String(repeating: "x", count: 257)])["password"]?
                    .contains("at most 256") == true)
            #expect(reasons(["email": "winston.smith@example.com", "password": "winston.smith"])["password"] != nil)
            #expect(reasons(["email": "not-an-email", "password": "correct horse battery"]).keys.sorted() == ["email"])
            #expect(reasons(["email": "x@", "password": "1"]).keys.sorted() == ["email", "password"])
            // Any Unicode is fine, and length counts characters after NFKC.
            #expect(
                try server.json("POST", "/v1/accounts", ["email": "u@example.com", "password": "пароль-ключ-🔑"]).status
                    == 202)
        }
    }

    @Test(
        "the right code verifies the email once; a wrong code and a reused code are refused alike",
        arguments: Backend.all)
    func verifyEmail(backend: Backend) throws {
        try backend.withServer { server throws in
            _ = try server.json(
                "POST", "/v1/accounts", ["email": "c@example.com", "password": "correct horse battery"])
            let code = try #require(try server.lastCode(to: "c@example.com"))
            let wrong = try server.json(
                "POST", "/v1/accounts/verify-email",
                ["email": "c@example.com", "code": code == "000000" ? "111111" : "000000"])
            #expect(wrong.status == 400)
            #expect(try wrong.problem.code == "invalid_code")
            let right = try server.json("POST", "/v1/accounts/verify-email", ["email": "c@example.com", "code": code])
            #expect(right.status == 200)
            let again = try server.json("POST", "/v1/accounts/verify-email", ["email": "c@example.com", "code": code])
            #expect(again.status == 400)
            let unknown = try server.json(
                "POST", "/v1/accounts/verify-email", ["email": "nobody@example.com", "code": code])
            #expect(unknown.status == 400)
            #expect(try unknown.problem.detail == wrong.problem.detail)
            let token = try server.json(
                "POST", "/v1/sessions", ["email": "c@example.com", "password": "correct horse battery"]
            ).decode(SessionCreated.self).token
            #expect(try server.get("/v1/session", token: token).decode(CurrentSession.self).user.emailVerified)
        }
    }

    @Test(
        "five wrong codes kill the code, and a resend in the same window does not reset the count",
        arguments: Backend.all)
    func failuresSurviveResend(backend: Backend) throws {
        try backend.withServer { server throws in
            _ = try server.json(
                "POST", "/v1/accounts", ["email": "d@example.com", "password": "correct horse battery"])
            var code = try #require(try server.lastCode(to: "d@example.com"))
            let wrong = code == "999999" ? "888888" : "999999"
            for _ in 0..<3 {
                _ = try server.json("POST", "/v1/accounts/verify-email", ["email": "d@example.com", "code": wrong])
            }
            #expect(
                try server.json("POST", "/v1/accounts/verify-email/resend", ["email": "d@example.com"]).status == 202)
            server.tick()
            code = try #require(try server.lastCode(to: "d@example.com"))
            for _ in 0..<2 {
                _ = try server.json(
                    "POST", "/v1/accounts/verify-email",
                    ["email": "d@example.com", "code": code == wrong ? "777777" : wrong])
            }
            // Five failures in the window: even the right code is refused now.
            #expect(
                try server.json("POST", "/v1/accounts/verify-email", ["email": "d@example.com", "code": code]).status
                    == 400)
            // Once the window is over, a new code starts afresh.
            server.clock.advance(11 * 60)
            _ = try server.json("POST", "/v1/accounts/verify-email/resend", ["email": "d@example.com"])
            server.tick()
            code = try #require(try server.lastCode(to: "d@example.com"))
            #expect(
                try server.json("POST", "/v1/accounts/verify-email", ["email": "d@example.com", "code": code]).status
                    == 200)
        }
    }

    @Test("parallel wrong codes get five tries in all, then even the right code is refused", arguments: Backend.all)
    func parallelCodes(backend: Backend) throws {
        try backend.withServer { server throws in
            _ = try server.json(
                "POST", "/v1/accounts", ["email": "par@example.com", "password": "correct horse battery"])
            let code = try #require(try server.lastCode(to: "par@example.com"))
            let wrong = code == "123456" ? "654321" : "123456"
            let port = server.port
            runThreads(12) { _ in
                _ = try? HTTPTestClient(port: port).json(
                    "POST", "/v1/accounts/verify-email", ["email": "par@example.com", "code": wrong])
            }
            let failures = try server.database.transaction {
                try $0.queryOne("SELECT failures FROM email_codes")!.int("failures")
            }
            #expect(failures == 5)
            #expect(
                try server.json("POST", "/v1/accounts/verify-email", ["email": "par@example.com", "code": code]).status
                    == 400)
        }
    }

    @Test("code checks are rate limited per client IP")
    func codeRateLimit() throws {
        let config = TestServer.configuration {
            $0.signInPerIPBurst = 2
            $0.signInPerIPRate = 0.01
        }
        try Backend.all[0].withServer(config) { server throws in
            let statuses = try (0..<3).map { _ in
                try server.json("POST", "/v1/accounts/verify-email", ["email": "z@example.com", "code": "123456"])
                    .status
            }
            #expect(statuses == [400, 400, 429])
        }
    }

    @Test("per-IP limits count IPv6 clients by their /64")
    func clientKey() {
        #expect(ClientKey.of(address: "203.0.113.7") == "203.0.113.7")
        #expect(ClientKey.of(address: "2001:db8:1:2:aaaa::1") == "2001:db8:1:2::/64")
        #expect(ClientKey.of(address: "2001:db8:1:2:ffff:ffff:ffff:ffff") == ClientKey.of(address: "2001:db8:1:2::9"))
        #expect(ClientKey.of(address: "2001:db8:1:3::1") != ClientKey.of(address: "2001:db8:1:2::1"))
        #expect(ClientKey.of(address: "::ffff:198.51.100.4") == "198.51.100.4")
    }

    @Test("a code expires after 10 minutes", arguments: Backend.all)
    func codeExpires(backend: Backend) throws {
        try backend.withServer { server throws in
            _ = try server.json(
                "POST", "/v1/accounts", ["email": "e@example.com", "password": "correct horse battery"])
            let code = try #require(try server.lastCode(to: "e@example.com"))
            server.clock.advance(10 * 60 + 1)
            #expect(
                try server.json("POST", "/v1/accounts/verify-email", ["email": "e@example.com", "code": code]).status
                    == 400)
        }
    }

    @Test("resend answers the same for unknown addresses, sends nothing to them, and is rate limited per address")
    func resend() throws {
        try Backend.all[0].withServer { server throws in
            #expect(
                try server.json("POST", "/v1/accounts/verify-email/resend", ["email": "ghost@example.com"]).status
                    == 202)
            server.tick()
            #expect(try server.lastMessage(to: "ghost@example.com") == nil)
            _ = try server.json(
                "POST", "/v1/accounts", ["email": "f@example.com", "password": "correct horse battery"])
            var statuses: [Int] = []
            for _ in 0..<4 {
                statuses.append(
                    try server.json("POST", "/v1/accounts/verify-email/resend", ["email": "f@example.com"]).status)
            }
            #expect(statuses == [202, 202, 202, 429])
            // Three requests in one pass send one code (a later one would void the earlier).
            server.tick()
            #expect(try server.outbox(to: "f@example.com").count == 2)
            let limited = try server.json("POST", "/v1/accounts/verify-email/resend", ["email": "f@example.com"])
            #expect(try limited.problem.code == "rate_limited")
            #expect(Int(limited.header("retry-after") ?? "") ?? 0 > 0)
            server.clock.advance(301)
            #expect(
                try server.json("POST", "/v1/accounts/verify-email/resend", ["email": "f@example.com"]).status == 202)
        }
    }

    @Test(
        "a resend does the same work for an unverified account as for an unknown address: the code is issued after the answer, by the background pass",
        arguments: Backend.all)
    func resendIsUniform(backend: Backend) throws {
        try backend.withServer { server throws in
            _ = try server.json(
                "POST", "/v1/accounts", ["email": "late@example.com", "password": "correct horse battery"])
            let first = try #require(try server.lastCode(to: "late@example.com"))
            for email in ["late@example.com", "nobody@example.com"] {
                #expect(try server.json("POST", "/v1/accounts/verify-email/resend", ["email": email]).status == 202)
            }
            // Answered without looking the address up: both are queued alike, nothing issued yet.
            let queued = try server.database.read {
                try $0.query("SELECT email FROM email_resends ORDER BY seq", []).map { try $0.text("email") }
            }
            #expect(queued == ["late@example.com", "nobody@example.com"])
            #expect(try server.outbox(to: "late@example.com").count == 1)
            server.tick()
            #expect(
                try server.database.read { try $0.queryOne("SELECT COUNT(*) AS n FROM email_resends", [])?.int("n") }
                    == 0)
            let second = try #require(try server.lastCode(to: "late@example.com"))
            #expect(try server.outbox(to: "late@example.com").count == 2)
            #expect(try server.outbox(to: "nobody@example.com").isEmpty)
            // The new code works, the old one is void, and the audit entry names the requester.
            if second != first {
                #expect(
                    try server.json("POST", "/v1/accounts/verify-email", ["email": "late@example.com", "code": first])
                        .status == 400)
            }
            #expect(
                try server.json("POST", "/v1/accounts/verify-email", ["email": "late@example.com", "code": second])
                    .status == 200)
            #expect(try server.auditKinds().filter { $0 == "email.verification_sent" }.count >= 1)
        }
    }

    @Test("sign-ups are rate limited per client IP")
    func signUpRateLimit() throws {
        let config = TestServer.configuration {
            $0.signUpPerIPBurst = 2
            $0.signUpPerIPRate = 0.01
        }
        try Backend.all[0].withServer(config) { server throws in
            let statuses = try (0..<3).map {
                try server.json(
                    "POST", "/v1/accounts", ["email": "r\($0)@example.com", "password": "correct horse battery"]
                ).status
            }
            #expect(statuses == [202, 202, 429])
        }
    }

    @Test("the dev outbox lists messages newest first, filters by recipient, and exists only in dev mode")
    func devOutbox() throws {
        try Backend.all[0].withServer { server throws in
            _ = try server.json(
                "POST", "/v1/accounts", ["email": "g@example.com", "password": "correct horse battery"])
            _ = try server.json(
                "POST", "/v1/accounts", ["email": "h@example.com", "password": "correct horse battery"])
            let listing = try server.get("/dev/outbox")
            #expect(try listing.decode(OutboxListing.self).messages.map(\.to) == ["h@example.com", "g@example.com"])
            // The wire shape itself: exactly these keys.
            let raw = try #require(try listing.wireObject()["messages"] as? [[String: Any]])
            #expect(Set(raw.flatMap { $0.keys }) == ["id", "channel", "to", "text", "created_at", "status"])
            #expect(try server.outbox(to: "g@example.com").count == 1)
        }
        try Backend.all[0].withServer(TestServer.configuration { $0.dev = false }) { server throws in
            #expect(try server.get("/dev/outbox").status == 404)
        }
    }
}
