import API
import Core
import Crypto
import Foundation
import ServerTestSupport
import Store
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

@Suite("Second factors frozen after a hundred wrong proofs in a row")
struct MFAFreezeTests {
    @Test(
        "a hundred wrong proofs in a row lock the second step for good, the hundredth answering so: the owner is told, and only an administrator's reset unlocks it",
        arguments: Backend.all)
    func frozen(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "frozen@example.com")
            let totp = try user.enrollTOTP()
            var statuses: [Int] = []
            for _ in 1...100 {
                // Wrong at this moment: none of the codes the server's window takes now (the clock moves 25 hours
                // over the loop, so a fixed "000000" is right at some step once in a few thousand runs).
                let window = Set((-2...2).map { user.totp(totp.secret, offset: $0) })
                let wrong = ["000000", "111111", "222222"].first { !window.contains($0) }!
                // A new sign-in for each, after any growing lock: only the account's count adds up.
                let pending = try user.passwordSignIn().decode(MFARequired.self).pendingCredential
                let answer = try server.json(
                    "POST", "/v1/sessions/mfa",
                    ["pending_credential": pending, "enrollment_id": totp.id, "code": wrong])
                statuses.append(answer.status)
                if statuses.count == 100 { #expect(try answer.problem.code == "second_factor_frozen") }
                server.clock.advance(901)
            }
            #expect(Set(statuses.prefix(99)) == [400])
            #expect(statuses.last == 403, "the freezing proof says so, not 'wrong code, tries left'")
            let pending = try user.passwordSignIn().decode(MFARequired.self).pendingCredential
            let locked = try server.json(
                "POST", "/v1/sessions/mfa",
                ["pending_credential": pending, "enrollment_id": totp.id, "code": user.totp(totp.secret)])
            #expect(try locked.problem.code == "second_factor_frozen")
            #expect(
                try server.outbox(to: "frozen@example.com").filter { $0.text.contains("a hundred times in a row") }
                    .count == 1)
            #expect(try server.auditKinds().filter { $0 == "mfa.frozen" }.count == 1)
            let id = try server.database.transaction {
                try AccountRepository.find(email: "frozen@example.com", on: $0)!.id
            }
            _ = try server.services.admin.resetMFA(
                id, actor: .init(name: "ops", client: AuditContext(ip: "10.0.0.9", userAgent: "admin")))
            // The factors are gone; a new one enrolls and proves as on a fresh account.
            var fresh = user
            fresh.token = try user.passwordSignIn().decode(SessionCreated.self).token
            let app = try fresh.enrollTOTP(name: "New phone")
            server.clock.advance(30)
            let next = try user.passwordSignIn().decode(MFARequired.self).pendingCredential
            let signedIn = try server.json(
                "POST", "/v1/sessions/mfa",
                ["pending_credential": next, "enrollment_id": app.id, "code": user.totp(app.secret)])
            #expect(signedIn.status == 201)
        }
    }

    @Test(
        "the freeze reached past a flow's budget (proofs in parallel, never checked) is audited and told too, and answers so"
    )
    func frozenPastTheBudget() throws {
        try Backend.all[0].withServer { server throws in
            let user = try MFAClient(server, email: "frozen2@example.com")
            let totp = try user.enrollTOTP()
            let id = try server.database.transaction {
                try AccountRepository.find(email: "frozen2@example.com", on: $0)!.id
            }
            let pending = try user.passwordSignIn().decode(MFARequired.self).pendingCredential
            try server.database.transaction { db in
                // 99 wrong in a row so far, and five proofs of this sign-in already counted (in flight).
                _ = try db.execute(
                    "INSERT INTO login_throttle (email_key, failures, locked_until, updated_at) VALUES ($1, 99, 0, $2)",
                    [.text("mfa:\(id.raw)"), .int(server.nowMillis)])
                for _ in 0..<5 {
                    _ = try PurposeAttempts.count(
                        .signIn(pendingHash: SHA256.hex(pending)), now: server.nowMillis, on: db)
                }
            }
            let answer = try server.json(
                "POST", "/v1/sessions/mfa",
                ["pending_credential": pending, "enrollment_id": totp.id, "code": user.totp(totp.secret)])
            #expect(answer.status == 403)
            #expect(try answer.problem.code == "second_factor_frozen")
            #expect(try server.auditKinds().contains("mfa.frozen"))
            #expect(
                try server.outbox(to: "frozen2@example.com").contains { $0.text.contains("a hundred times in a row") })
        }
    }

    @Test(
        "a frozen second step sends no challenge and takes no push approval: a device's, for a sign-in or passwordless",
        arguments: Backend.all)
    func frozenRefusesPushes(backend: Backend) throws {
        try backend.withServer { server throws in
            let s = try PushApprovalTests.setup(server, email: "frozenpush@example.com")
            let id = try server.database.transaction {
                try AccountRepository.find(email: "frozenpush@example.com", on: $0)!.id
            }
            // A push approved just before the freeze.
            let pending = try s.user.passwordSignIn().decode(MFARequired.self).pendingCredential
            let sent = try server.json(
                "POST", "/v1/mfa/sign-in/challenges", ["pending_credential": pending, "enrollment_id": s.deviceID]
            ).decode(ChallengeSent.self)
            let approval = try #require(sent.approvalID)
            #expect(
                try PushApprovalTests.decide(s, approval, "approve", try #require(sent.number)).decode(
                    ApprovalState.self
                ).status == "approved")
            let started = try server.json("POST", "/v1/sessions/push", ["email": "frozenpush@example.com"]).decode(
                PushSignInStarted.self)
            #expect(
                try PushApprovalTests.decide(s, started.approvalID, "approve", started.number).decode(
                    ApprovalState.self
                ).status == "approved")
            try server.database.transaction { db in
                _ = try db.execute(
                    "INSERT INTO login_throttle (email_key, failures, locked_until, updated_at) VALUES ($1, 100, $2, $3)",
                    [.text("mfa:\(id.raw)"), .int(LoginThrottle.frozen), .int(server.nowMillis)])
            }
            let done = try server.json(
                "POST", "/v1/sessions/mfa",
                ["pending_credential": pending, "enrollment_id": s.deviceID, "approval_id": approval])
            #expect(done.status == 403)
            #expect(try done.problem.code == "second_factor_frozen")
            #expect(
                try server.json(
                    "POST", "/v1/sessions/push/complete",
                    ["pending_credential": started.pendingCredential, "approval_id": started.approvalID]
                )
                .status == 400)
            // Nothing new is sent: no challenge (nor push) for a sign-in, and a passwordless push reaches no device.
            let next = try s.user.passwordSignIn().decode(MFARequired.self).pendingCredential
            let challenge = try server.json(
                "POST", "/v1/mfa/sign-in/challenges", ["pending_credential": next, "enrollment_id": s.deviceID])
            #expect(try challenge.problem.code == "second_factor_frozen")
            let decoy = try server.json("POST", "/v1/sessions/push", ["email": "frozenpush@example.com"])
            #expect(decoy.status == 202)
            #expect(try PushApprovalTests.poll(s).decode(PendingApprovals.self).approvals.isEmpty)
        }
    }
}
