import API
import Foundation
import ServerTestSupport
import Store
import Synchronization
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

@Suite("Resetting a forgotten password")
struct PasswordResetTests {
    static let password = "correct horse battery"

    /// The 8-digit reset code in the newest reset email to `email`.
    static func resetCode(_ server: TestServer, _ email: String) throws -> String? {
        guard let message = try server.outbox(to: email).first(where: { $0.text.contains("reset") }),
            let found = message.text.range(of: #"(?<!\d)\d{8}(?!\d)"#, options: .regularExpression)
        else { return nil }
        return String(message.text[found])
    }

    /// Asks for a reset and runs the background pass that sends the code.
    static func ask(_ server: TestServer, _ email: String) throws -> HTTPTestClient.Response {
        let answer = try server.json("POST", "/v1/accounts/password-reset", ["email": email])
        server.tick()
        return answer
    }

    static func verify(_ server: TestServer, _ email: String, _ code: String) throws -> HTTPTestClient.Response {
        try server.json("POST", "/v1/accounts/password-reset/verify", ["email": email, "code": code])
    }

    @Test(
        "every address gets the same answer and only an account's gets a code, which typed in any form sets a new password once, ends every session and tells the owner",
        arguments: Backend.all)
    func withoutFactors(backend: Backend) throws {
        try backend.withServer { server throws in
            let old = try #require(try server.signUp("forgot@example.com", password: Self.password))
            let known = try Self.ask(server, "forgot@example.com")
            let unknown = try Self.ask(server, "nobody@example.com")
            #expect(known.status == 202 && unknown.status == 202 && known.body == unknown.body)
            #expect(try server.outbox(to: "nobody@example.com").isEmpty)
            let code = try #require(try Self.resetCode(server, "forgot@example.com"))
            // A code of the wrong shape says so and costs no attempt; a wrong one is the one answer for every failure.
            for shape in ["12ab", "1234567", "123456789", ""] {
                let malformed = try Self.verify(server, "forgot@example.com", shape)
                #expect(malformed.status == 422)
                #expect(try malformed.problem.code == "invalid_fields")
            }
            for _ in 0..<3 { _ = try Self.verify(server, "forgot@example.com", "12ab") }
            let wrong = code == "00000000" ? "11111111" : "00000000"
            #expect(try Self.verify(server, "forgot@example.com", wrong).problem.code == "invalid_code")
            #expect(try Self.verify(server, "nobody@example.com", code).problem.code == "invalid_code")
            // As a person types it: in two groups, in full-width digits.
            let typed =
                String(code.prefix(4)) + " - "
                + String(code.suffix(4)).map { String(UnicodeScalar(0xFF10 + Int(String($0))!)!) }.joined()
            let verified = try Self.verify(server, "forgot@example.com", typed).decode(PasswordResetVerified.self)
            #expect(!verified.secondFactorRequired && verified.hints.isEmpty)
            // The code is spent.
            #expect(try Self.verify(server, "forgot@example.com", code).problem.code == "invalid_code")
            func complete(_ password: String) throws -> HTTPTestClient.Response {
                try server.json(
                    "POST", "/v1/accounts/password-reset/complete",
                    ["reset_credential": verified.resetCredential, "new_password": password])
            }
            // Checked like any new password: a breached one is refused, and the credential stays usable.
            let common = try complete("qwerty123")
            #expect(common.status == 422)
            #expect(try common.problem.invalidParams?.first?.name == "new_password")
            #expect(try complete("a brand new passphrase").status == 204)
            #expect(try complete("another new passphrase").problem.code == "invalid_reset_credential")
            #expect(try server.get("/v1/session", token: old).status == 401)
            #expect(
                try server.json("POST", "/v1/sessions", ["email": "forgot@example.com", "password": Self.password])
                    .status == 401)
            #expect(
                try server.json(
                    "POST", "/v1/sessions", ["email": "forgot@example.com", "password": "a brand new passphrase"]
                ).status == 201)
            #expect(try server.outbox(to: "forgot@example.com").contains { $0.text.contains("was reset") })
            let kinds = try server.auditKinds()
            for kind in [
                "password_reset.requested", "password_reset.failed", "password_reset.verified", "password.reset",
            ] {
                #expect(kinds.contains(kind), "\(kind)")
            }
        }
    }

    @Test(
        "an account with a second factor proves it before the new password is set: without it, or with a wrong code, nothing changes",
        arguments: Backend.all)
    func withAFactor(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "guarded@example.com")
            let factor = try user.enrollTOTP()
            server.clock.advance(30)
            _ = try Self.ask(server, "guarded@example.com")
            let verified = try Self.verify(
                server, "guarded@example.com", try #require(try Self.resetCode(server, "guarded@example.com"))
            )
            .decode(PasswordResetVerified.self)
            #expect(verified.secondFactorRequired && verified.hints.map(\.enrollmentID).contains(factor.id))
            func complete(_ extra: [String: Any]) throws -> HTTPTestClient.Response {
                try server.json(
                    "POST", "/v1/accounts/password-reset/complete",
                    ["reset_credential": verified.resetCredential, "new_password": "a brand new passphrase"].merging(
                        extra
                    ) { $1 })
            }
            #expect(try complete([:]).problem.code == "second_factor_required")
            let right = user.totp(factor.secret)
            #expect(
                try complete(["enrollment_id": factor.id, "code": right == "000000" ? "111111" : "000000"]).problem.code
                    == "invalid_code")
            #expect(
                try server.json("POST", "/v1/sessions", ["email": "guarded@example.com", "password": Self.password])
                    .status == 200)
            #expect(try complete(["enrollment_id": factor.id, "code": right]).status == 204)
            #expect(
                try server.json(
                    "POST", "/v1/sessions", ["email": "guarded@example.com", "password": "a brand new passphrase"]
                ).status == 200)
            #expect(try server.get("/v1/session", token: user.token).status == 401)
        }
    }

    @Test(
        "five wrong codes kill the code, a new one in the same window keeps the count, and the credential dies after 10 minutes"
    )
    func limits() throws {
        try Backend.all[0].withServer { server throws in
            _ = try server.signUp("guessed@example.com", password: Self.password)
            _ = try Self.ask(server, "guessed@example.com")
            let code = try #require(try Self.resetCode(server, "guessed@example.com"))
            let wrong = code == "00000000" ? "11111111" : "00000000"
            for _ in 0..<5 { #expect(try Self.verify(server, "guessed@example.com", wrong).status == 400) }
            #expect(try Self.verify(server, "guessed@example.com", code).status == 400, "dead after five")
            // Asking again inside the window buys no guesses: the new code arrives, and is dead too.
            server.clock.advance(60)
            _ = try Self.ask(server, "guessed@example.com")
            let again = try #require(try Self.resetCode(server, "guessed@example.com"))
            #expect(again != code)
            #expect(try Self.verify(server, "guessed@example.com", again).status == 400, "the window's five are spent")
            server.clock.advance(10 * 60)
            _ = try Self.ask(server, "guessed@example.com")
            let fresh = try #require(try Self.resetCode(server, "guessed@example.com"))
            let verified = try Self.verify(server, "guessed@example.com", fresh).decode(PasswordResetVerified.self)
            server.clock.advance(10 * 60 + 1)
            #expect(
                try server.json(
                    "POST", "/v1/accounts/password-reset/complete",
                    ["reset_credential": verified.resetCredential, "new_password": "a brand new passphrase"]
                ).problem.code
                    == "invalid_reset_credential")
        }
    }

    /// Completes `verified`'s reset with `extra` (a factor's proof), setting "a brand new passphrase".
    static func complete(_ server: TestServer, _ verified: PasswordResetVerified, _ extra: [String: Any] = [:]) throws
        -> HTTPTestClient.Response
    {
        try server.json(
            "POST", "/v1/accounts/password-reset/complete",
            ["reset_credential": verified.resetCredential, "new_password": "a brand new passphrase"].merging(extra) {
                $1
            })
    }

    static func verified(_ server: TestServer, _ email: String) throws -> PasswordResetVerified {
        _ = try ask(server, email)
        return try verify(server, email, try #require(try resetCode(server, email))).decode(PasswordResetVerified.self)
    }

    @Test(
        "an address someone else signed up with and never verified is the owner's after a reset: it is verified, and the squatter's password and sessions are gone",
        arguments: Backend.all)
    func squattedAddress(backend: Backend) throws {
        try backend.withServer { server throws in
            let squatter = try #require(
                try server.signUp("owner@example.com", password: "the squatter's password", verify: false))
            let verified = try Self.verified(server, "owner@example.com")
            #expect(!verified.secondFactorRequired)
            // The right code alone verifies nothing: until the new password is set, the squatter's account stays unverified.
            let between = try server.database.transaction {
                try AccountRepository.find(email: "owner@example.com", on: $0)
            }
            #expect(try #require(between).emailVerifiedAt == nil)
            #expect(
                try server.get("/v1/session", token: squatter).decode(CurrentSession.self).user.emailVerified == false)
            #expect(try Self.complete(server, verified).status == 204)
            #expect(try server.get("/v1/session", token: squatter).status == 401)
            #expect(
                try server.json(
                    "POST", "/v1/sessions", ["email": "owner@example.com", "password": "the squatter's password"]
                ).status == 401)
            let token = try server.json(
                "POST", "/v1/sessions", ["email": "owner@example.com", "password": "a brand new passphrase"]
            )
            .decode(SessionCreated.self).token
            #expect(try server.get("/v1/session", token: token).decode(CurrentSession.self).user.emailVerified)
        }
    }

    @Test(
        "a factor enrolled while a reset is under way must be proven before the new password is set",
        arguments: Backend.all)
    func factorEnrolledMidReset(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "midway@example.com")
            let verified = try Self.verified(server, "midway@example.com")
            #expect(!verified.secondFactorRequired)
            let factor = try user.enrollTOTP()
            server.clock.advance(30)
            #expect(try Self.complete(server, verified).problem.code == "second_factor_required")
            #expect(
                try Self.complete(server, verified, ["enrollment_id": factor.id, "code": user.totp(factor.secret)])
                    .status == 204)
        }
    }

    @Test(
        "a factor enrolled after the reset's first look, while the new password is hashed, is caught by the check in the finishing transaction",
        arguments: Backend.all)
    func factorEnrolledDuringTheFinish(backend: Backend) throws {
        try backend.withServer { server throws in
            nonisolated(unsafe) let user = try MFAClient(server, email: "racing@example.com")
            let verified = try Self.verified(server, "racing@example.com")
            #expect(!verified.secondFactorRequired)
            // The hashing runs between the first look (no factors) and the finish: the factor is enrolled there.
            let live = server.services.passwordResets
            let enrolled = Mutex<(id: String, secret: String)?>(nil)
            let hashing = PasswordHashing(
                hash: { password in
                    if enrolled.withLock({ $0 == nil }) {
                        let factor = try user.enrollTOTP()
                        enrolled.withLock { $0 = factor }
                    }
                    return try live.hashing.hash(password)
                }, verify: live.hashing.verify, needsRehash: live.hashing.needsRehash, decoy: live.hashing.decoy)
            let racing = PasswordResetService(
                transactions: live.transactions, clock: live.clock, hashing: hashing,
                passwordPolicy: live.passwordPolicy,
                codes: live.codes, secondFactors: live.secondFactors, push: live.push, outbox: live.outbox,
                changes: live.changes, limits: live.limits)
            #expect(throws: SecondFactorFailure.secondFactorRequired) {
                try racing.complete(
                    credential: verified.resetCredential, newPassword: "a brand new passphrase", factorID: nil,
                    answer: nil,
                    client: AuditContext(ip: "127.0.0.1", userAgent: "tests"))
            }
            let factor = try #require(enrolled.withLock { $0 })
            #expect(
                try user.passwordSignIn().status == 200, "the old password still signs in, now asking for the factor")
            // Nothing was spent: the credential completes once the new factor is proven.
            server.clock.advance(30)
            #expect(
                try Self.complete(server, verified, ["enrollment_id": factor.id, "code": user.totp(factor.secret)])
                    .status == 204)
        }
    }

    @Test(
        "a reset's fifth wrong proof ends it: the credential is spent, even for the right code, and the password is unchanged",
        arguments: Backend.all)
    func budgetSpent(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "budget@example.com")
            let factor = try user.enrollTOTP()
            server.clock.advance(30)
            let verified = try Self.verified(server, "budget@example.com")
            let right = user.totp(factor.secret)
            let wrong = user.totp(factor.secret) == "000000" ? "111111" : "000000"
            for left in (1...4).reversed() {
                let answer = try Self.complete(server, verified, ["enrollment_id": factor.id, "code": wrong])
                #expect(answer.status == 400)
                #expect(try answer.problem.remainingAttempts == left)
            }
            let fifth = try Self.complete(server, verified, ["enrollment_id": factor.id, "code": wrong])
            #expect(fifth.status == 403)
            #expect(try fifth.problem.code == "attempts_exhausted")
            #expect(
                try Self.complete(server, verified, ["enrollment_id": factor.id, "code": right]).problem.code
                    == "invalid_reset_credential")
            #expect(try user.passwordSignIn().status == 200, "the old password still signs in")
        }
    }

    @Test(
        "a reset can be approved on the device, which is told it is a reset; picking the wrong number ends the reset",
        arguments: Backend.all)
    func pushApproval(backend: Backend) throws {
        try backend.withServer { server throws in
            let s = try PushApprovalTests.setup(server, email: "pushreset@example.com")
            func challenge(_ verified: PasswordResetVerified) throws -> (approval: String, number: Int) {
                let sent = try server.json(
                    "POST", "/v1/accounts/password-reset/challenges",
                    ["reset_credential": verified.resetCredential, "enrollment_id": s.deviceID]
                ).decode(ChallengeSent.self)
                return (try #require(sent.approvalID), try #require(sent.number))
            }
            let first = try Self.verified(server, "pushreset@example.com")
            let (approval, number) = try challenge(first)
            let listed = try PushApprovalTests.poll(s).decode(PendingApprovals.self).approvals
            #expect(listed.map(\.purpose) == ["reset"])
            let wrongPick = try #require(listed.first?.choices.first { $0 != number })
            _ = try PushApprovalTests.decide(s, approval, "approve", wrongPick)
            #expect(
                try Self.complete(server, first, ["enrollment_id": s.deviceID, "approval_id": approval]).problem.code
                    == "invalid_reset_credential")
            #expect(try s.user.passwordSignIn().status == 200, "nothing changed")

            server.clock.advance(60)
            let second = try Self.verified(server, "pushreset@example.com")
            let (next, nextNumber) = try challenge(second)
            #expect(
                try PushApprovalTests.decide(s, next, "approve", nextNumber).decode(ApprovalState.self).status
                    == "approved")
            #expect(
                try Self.complete(server, second, ["enrollment_id": s.deviceID, "approval_id": next]).status == 204)
            #expect(try s.user.passwordSignIn().status == 401)
        }
    }

    @Test(
        "an account disabled after its reset began can neither send a challenge, call, nor set the password: the answer of a dead credential",
        arguments: Backend.all)
    func disabledMidReset(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "midstop@example.com")
            let phone = try user.enrollPhone()
            server.clock.advance(30)
            let verified = try Self.verified(server, "midstop@example.com")
            let id = try server.database.transaction {
                try AccountRepository.find(email: "midstop@example.com", on: $0)!.id
            }
            func refusals() throws -> [String?] {
                let credential = ["reset_credential": verified.resetCredential, "enrollment_id": phone]
                return try [
                    server.json("POST", "/v1/accounts/password-reset/challenges", credential),
                    server.json("POST", "/v1/accounts/password-reset/challenges/call", credential),
                    Self.complete(server, verified, ["enrollment_id": phone, "code": "123456"]),
                ].map { $0.status == 401 ? try $0.problem.code.rawValue : "\($0.status)" }
            }
            func resets() throws -> Int64 {
                try server.database.transaction {
                    try $0.queryOne("SELECT COUNT(*) AS n FROM password_resets WHERE user_id = $1", [id.sql])!.int("n")
                }
            }
            let dead = Array(repeating: Optional("invalid_reset_credential"), count: 3)
            // Disabled with the reset's row still there (as if mid-flight): the credential reads as dead.
            try server.database.transaction {
                _ = try $0.execute("UPDATE users SET disabled_at = $2 WHERE id = $1", [id.sql, .int(server.nowMillis)])
            }
            #expect(try refusals() == dead)
            #expect(try resets() == 1)
            try server.database.transaction {
                _ = try $0.execute("UPDATE users SET disabled_at = NULL WHERE id = $1", [id.sql])
            }
            #expect(
                try server.json(
                    "POST", "/v1/accounts/password-reset/challenges",
                    ["reset_credential": verified.resetCredential, "enrollment_id": phone]
                )
                .status / 100 == 2)
            // An administrator's disable deletes the reset.
            _ = try server.services.admin.disable(
                id, actor: .init(name: "ops", client: AuditContext(ip: "10.0.0.9", userAgent: "admin")))
            #expect(try resets() == 0)
            #expect(try refusals() == dead)
            #expect(
                try user.passwordSignIn().status == 401 || user.passwordSignIn().status == 403,
                "the old password is unchanged and the account disabled")
        }
    }

    @Test("a disabled account is sent nothing: its address gets the same answer as any other")
    func disabledAccount() throws {
        try Backend.all[0].withServer { server throws in
            _ = try server.signUp("disabled@example.com", password: Self.password)
            try server.database.transaction { db in
                _ = try db.execute(
                    "UPDATE users SET disabled_at = $1 WHERE email = 'disabled@example.com'", [.int(server.nowMillis)])
            }
            let before = try server.outbox(to: "disabled@example.com").count
            let answer = try Self.ask(server, "disabled@example.com")
            let stranger = try Self.ask(server, "stranger@example.com")
            #expect(answer.status == 202 && answer.body == stranger.body)
            #expect(try server.outbox(to: "disabled@example.com").count == before)
        }
    }
}
