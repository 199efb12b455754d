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

@Suite("A payment pushed to the device: shown there, its hash signed with the decision")
struct PaymentPushTests {
    static let action: [String: JSONScalar] = [
        "type": .string("transfer"), "amount": .string("250.00"), "currency": .string("EUR"),
        "payee": .string("Erika Mustermann"), "to": .string("DE89370400440532013000"),
        "details": .string(String(repeating: "ab", count: 32)), "client": .string("trifactor-bank"),
    ]

    /// A payment pushed to `s`'s device through the service the payment page calls.
    static func pushed(_ s: PushApprovalTests.Setup) throws -> (AuthorizationService.Created, Caller, AuditContext) {
        let audit = AuditContext(ip: "127.0.0.1", userAgent: "trifactor-tests")
        let caller = try s.server.services.sessions.authenticate(token: s.user.token, client: audit)
        let created = try s.server.services.authorizations.create(
            action, factorID: FactorID(s.deviceID), by: caller, client: audit,
            push: "Trifactor Bank: Confirm transfer of EUR 250.00 to Erika Mustermann")
        return (created, caller, audit)
    }

    /// The device's decision, signed over `action` as its last part (`decision:number:hash`), or without it.
    static func decide(
        _ s: PushApprovalTests.Setup, _ approval: String, _ decision: String, _ number: Int, hash: String?
    ) throws -> HTTPTestClient.Response {
        var headers = try PushApprovalTests.deviceHeaders(s)
        headers["Content-Type"] = "application/json"
        let signed = "\(decision):\(number)" + (hash.map { ":\($0)" } ?? "")
        let signature = try s.device.sign(purpose: "push", challenge: approval, action: signed)
        let body = try JSONSerialization.data(withJSONObject: [
            "decision": decision, "number": number, "signature": signature,
        ])
        return try s.server.client().request(
            "POST", "/v1/devices/\(s.deviceID)/approvals/\(approval)", headers: headers, body: Array(body))
    }

    @Test(
        "the device is shown the payment, recomputes its hash, and only a decision over that hash approves it, once",
        arguments: Backend.all)
    func approve(backend: Backend) throws {
        try backend.withServer { server throws in
            let s = try PushApprovalTests.setup(server, email: "payer@example.com")
            let (created, caller, audit) = try Self.pushed(s)
            let pushed = try #require(created.pushed)
            let listed = try #require(try PushApprovalTests.poll(s).decode(PendingApprovals.self).approvals.first)
            #expect(listed.purpose == "authz")
            #expect(listed.action == Self.action)
            #expect(listed.message == "Trifactor Bank: Confirm transfer of EUR 250.00 to Erika Mustermann")
            // What the device shows hashes to what the approval is bound to: the device can check it itself.
            #expect(listed.actionHash == SHA256.hex(CanonicalAction.form(Self.action)))
            #expect(listed.actionHash == created.actionHash)
            let id = created.id
            let approval = ApprovalID(pushed.id.raw)
            let authorizations = server.services.authorizations
            // A decision signed as a sign-in's (no hash), or over another payment's hash, approves nothing.
            #expect(try Self.decide(s, pushed.id.raw, "approve", pushed.number, hash: nil).status == 401)
            var other = Self.action
            other["amount"] = .string("2500.00")
            let otherHash = SHA256.hex(CanonicalAction.form(other))
            #expect(try Self.decide(s, pushed.id.raw, "approve", pushed.number, hash: otherHash).status == 401)
            #expect(try authorizations.pushState(approval, of: id, action: Self.action) == "pending")
            // Not approved yet: the page cannot approve the payment with it.
            #expect(throws: SecondFactorFailure.invalidCode) {
                try authorizations.approve(id, approval: approval, by: caller, client: audit)
            }
            let decided = try Self.decide(s, pushed.id.raw, "approve", pushed.number, hash: created.actionHash)
            #expect(try decided.decode(ApprovalState.self).status == "approved")
            #expect(try authorizations.pushState(approval, of: id, action: Self.action) == "approved")
            // The state is asked for the action the page states: another payment's never reads as approved.
            #expect(try authorizations.pushState(approval, of: id, action: other) == "expired")
            try authorizations.approve(id, approval: approval, by: caller, client: audit)
            // Spent once: the approval is not spent twice, and the payment is spent for exactly its action.
            #expect(throws: AuthorizationFailure.notFound) {
                try authorizations.approve(id, approval: approval, by: caller, client: audit)
            }
            #expect(throws: AuthorizationFailure.mismatch) { try authorizations.consume(id, action: other, by: caller) }
        }
    }

    @Test("the payment is spent once for its action after the device approved it")
    func spend() throws {
        try Backend.all[0].withServer { server throws in
            let s = try PushApprovalTests.setup(server, email: "spender@example.com")
            let (created, caller, audit) = try Self.pushed(s)
            let pushed = try #require(created.pushed)
            _ = try Self.decide(s, pushed.id.raw, "approve", pushed.number, hash: created.actionHash)
            let authorizations = server.services.authorizations
            try authorizations.approve(created.id, approval: ApprovalID(pushed.id.raw), by: caller, client: audit)
            try authorizations.consume(created.id, action: Self.action, by: caller)
            #expect(throws: AuthorizationFailure.notFound) {
                try authorizations.consume(created.id, action: Self.action, by: caller)
            }
            #expect(try server.auditKinds().contains("authorization.approved"))
        }
    }

    @Test(
        "an honest answer after Cancel withdrew the push is 'not found', never a bad signature; a denial may leave out the hash"
    )
    func lateAnswerAndPlainDenial() throws {
        try Backend.all[0].withServer { server throws in
            let s = try PushApprovalTests.setup(server, email: "late@example.com")
            let authorizations = server.services.authorizations
            let (first, _, _) = try Self.pushed(s)
            let late = try #require(first.pushed)
            try authorizations.withdraw(first.id, action: Self.action)
            #expect(try PushApprovalTests.poll(s).decode(PendingApprovals.self).approvals.isEmpty)
            let answered = try Self.decide(s, late.id.raw, "approve", late.number, hash: first.actionHash)
            #expect(answered.status == 404)
            #expect(try answered.problem.code == "authorization_not_found")
            #expect(!(try server.auditDetails("push.denied").contains { $0.contains("bad signature") }))
            // A device that cannot hash can still say no: a denial signed without the hash is taken.
            let (second, _, _) = try Self.pushed(s)
            let denied = try #require(second.pushed)
            #expect(
                try Self.decide(s, denied.id.raw, "deny", 0, hash: nil).decode(ApprovalState.self).status == "denied")
        }
    }

    @Test(
        "pushing a payment again withdraws the push still waiting: the device never shows two numbers for one payment")
    func onePushAtATime() throws {
        try Backend.all[0].withServer { server throws in
            let s = try PushApprovalTests.setup(server, email: "twice@example.com")
            let authorizations = server.services.authorizations
            let (created, caller, audit) = try Self.pushed(s)
            let first = try #require(created.pushed)
            let again = try authorizations.resend(
                created.id, action: Self.action, by: caller, client: audit, push: "Bank")
            let second = try #require(again.pushed)
            #expect(
                try authorizations.pushState(ApprovalID(first.id.raw), of: created.id, action: Self.action) == "denied")
            #expect(
                try authorizations.pushState(ApprovalID(second.id.raw), of: created.id, action: Self.action)
                    == "pending")
            #expect(
                try PushApprovalTests.poll(s).decode(PendingApprovals.self).approvals.map(\.approvalID) == [
                    second.id.raw
                ])
        }
    }

    @Test("a push the device did not answer in 2 minutes reads as expired, and a new push for the same payment is sent")
    func expiry() throws {
        try Backend.all[0].withServer { server throws in
            let s = try PushApprovalTests.setup(server, email: "slow@example.com")
            let (created, caller, audit) = try Self.pushed(s)
            let first = try #require(created.pushed)
            let authorizations = server.services.authorizations
            server.clock.advance(121)
            #expect(
                try authorizations.pushState(ApprovalID(first.id.raw), of: created.id, action: Self.action) == "expired"
            )
            #expect(try PushApprovalTests.poll(s).decode(PendingApprovals.self).approvals.isEmpty)
            // The payment's approval lives 5 minutes: "Send to my device" again pushes it anew, for the same approval.
            let again = try authorizations.resend(
                created.id, action: Self.action, by: caller, client: audit, push: "Bank")
            let second = try #require(again.pushed)
            #expect(second.id.raw != first.id.raw && again.id == created.id)
            let decided = try Self.decide(s, second.id.raw, "approve", second.number, hash: created.actionHash)
            #expect(try decided.decode(ApprovalState.self).status == "approved")
            try authorizations.approve(created.id, approval: ApprovalID(second.id.raw), by: caller, client: audit)
        }
    }

    @Test("a wrong number or a denial on the device voids the payment's approval; a new one must be asked")
    func wrongNumberAndDenial() throws {
        try Backend.all[0].withServer { server throws in
            let s = try PushApprovalTests.setup(server, email: "declined@example.com")
            let authorizations = server.services.authorizations
            let (first, caller, audit) = try Self.pushed(s)
            let wrong = try #require(first.pushed)
            let decided = try Self.decide(
                s, wrong.id.raw, "approve", wrong.number == 99 ? 98 : wrong.number + 1, hash: first.actionHash)
            #expect(try decided.decode(ApprovalState.self).status == "denied")
            #expect(try server.auditKinds().contains("push.wrong_number"))
            #expect(
                try authorizations.pushState(ApprovalID(wrong.id.raw), of: first.id, action: Self.action) == "denied")
            #expect(throws: AuthorizationFailure.notFound) {
                try authorizations.approve(first.id, approval: ApprovalID(wrong.id.raw), by: caller, client: audit)
            }
            #expect(throws: AuthorizationFailure.notFound) {
                _ = try authorizations.resend(first.id, action: Self.action, by: caller, client: audit, push: "Bank")
            }
            let (second, _, _) = try Self.pushed(s)
            let denied = try #require(second.pushed)
            #expect(
                try Self.decide(s, denied.id.raw, "deny", 0, hash: second.actionHash).decode(ApprovalState.self)
                    .status == "denied")
            #expect(throws: AuthorizationFailure.notFound) {
                try authorizations.approve(second.id, approval: ApprovalID(denied.id.raw), by: caller, client: audit)
            }
        }
    }
}

extension PaymentPushTests {
    @Test("payments pushed to the limit leave the user's sign-in pushes alone (each budget is counted apart)")
    func budgetsApart() throws {
        try Backend.all[0].withServer { server throws in
            let s = try PushApprovalTests.setup(server, email: "budget@example.com")
            let audit = AuditContext(ip: "127.0.0.1", userAgent: "trifactor-tests")
            let caller = try server.services.sessions.authenticate(token: s.user.token, client: audit)
            let push = server.services.secondFactors.push
            for _ in 0..<PushService.maxPerWindow {
                let created = try server.services.authorizations.create(
                    Self.action, factorID: FactorID(s.deviceID), by: caller, client: audit, push: "Bank")
                #expect(created.pushed != nil)
            }
            let refused = try server.services.authorizations.create(
                Self.action, factorID: FactorID(s.deviceID), by: caller, client: audit, push: "Bank")
            #expect(refused.pushed == nil, "a fourth payment push in ten minutes was sent")
            let device = try #require(
                try server.database.transaction { try FactorRepository.list(caller.user.id, on: $0) }.first {
                    $0.kind == .device
                })
            let signIn = try push.create(
                for: device, purpose: .signIn(pendingHash: String(repeating: "c", count: 64)), client: audit,
                now: server.clock.clock.now())
            #expect(signIn != nil, "the payments used up the sign-in pushes")
        }
    }
}
