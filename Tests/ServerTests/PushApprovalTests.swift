import API
import Core
import Foundation
import HTTP
import ServerTestSupport
import Store
import Synchronization
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

@Suite("Push approval with number matching")
struct PushApprovalTests {
    struct Setup {
        let server: TestServer
        let user: MFAClient
        let device: DeviceKey
        let deviceID: String
    }

    static func setup(_ server: TestServer, email: String) throws -> Setup {
        let user = try MFAClient(server, email: email)
        let device = try DeviceKey()
        return Setup(server: server, user: user, device: device, deviceID: try DeviceKeyTests.enroll(user, device))
    }

    /// The device's signed headers for polling and deciding.
    static func deviceHeaders(_ s: Setup) throws -> [String: String] {
        let time = Int64(s.server.clock.clock.now().timeIntervalSince1970)
        return [
            "X-Trifactor-Device-Time": String(time),
            "X-Trifactor-Device-Signature": try s.device.sign(purpose: "poll", challenge: "\(s.deviceID):\(time)"),
        ]
    }

    static func poll(_ s: Setup, wait: Int = 0) throws -> HTTPTestClient.Response {
        try s.server.client().request(
            "GET", "/v1/devices/\(s.deviceID)/approvals?wait=\(wait)", headers: try deviceHeaders(s))
    }

    static func decide(_ s: Setup, _ approval: String, _ decision: String, _ number: Int) throws
        -> HTTPTestClient.Response
    {
        var headers = try deviceHeaders(s)
        headers["Content-Type"] = "application/json"
        let signature = try s.device.sign(purpose: "push", challenge: approval, action: "\(decision):\(number)")
        let body = try JSONSerialization.data(withJSONObject: [
            "decision": decision, "number": number, "signature": signature,
        ])
        return try s.server.client().request(
            "POST", "/v1/devices/\(s.deviceID)/approvals/\(approval)", headers: headers, body: Array(body))
    }

    @Test(
        "the browser shows a number, the device picks it and approves, and the sign-in completes with the approval",
        arguments: Backend.all)
    func approve(backend: Backend) throws {
        try backend.withServer { server throws in
            let s = try Self.setup(server, email: "push@example.com")
            let pending = try s.user.passwordSignIn().decode(MFARequired.self).pendingCredential
            let challenge = try server.json(
                "POST", "/v1/mfa/sign-in/challenges", ["pending_credential": pending, "enrollment_id": s.deviceID])
            let approval = try #require(try challenge.decode(ChallengeSent.self).approvalID)
            let number = try #require(try challenge.decode(ChallengeSent.self).number)
            #expect((10...99).contains(number))
            let listed = try Self.poll(s).decode(PendingApprovals.self).approvals
            #expect(listed.count == 1)
            let choices = try #require(listed.first?.choices)
            #expect(choices.count == 3 && choices.contains(number) && Set(choices).count == 3)
            #expect(listed.first?.ip == "127.0.0.1" && listed.first?.userAgent == "trifactor-tests")
            // An unsigned or badly signed poll is refused.
            #expect(try server.get("/v1/devices/\(s.deviceID)/approvals").status == 401)
            #expect(try Self.decide(s, approval, "approve", number).decode(ApprovalState.self).status == "approved")
            // The browser's poll sends the pending credential in a header, which access logs leave out;
            // the query parameter of earlier clients still works, and without either the poll is refused.
            let state = try server.send(
                "GET", "/v1/mfa/sign-in/approvals/\(approval)", headers: ["X-Trifactor-Pending-Credential": pending])
            #expect(try state.decode(ApprovalState.self).status == "approved")
            #expect(
                try server.get("/v1/mfa/sign-in/approvals/\(approval)?pending_credential=\(pending)").decode(
                    ApprovalState.self
                ).status == "approved")
            #expect(try server.get("/v1/mfa/sign-in/approvals/\(approval)").status == 401)
            let done = try server.json(
                "POST", "/v1/sessions/mfa",
                ["pending_credential": pending, "enrollment_id": s.deviceID, "approval_id": approval])
            #expect(done.status == 201)
            #expect(try done.decode(SessionCreated.self).session.methods == ["pwd", "hwk"])
            // Single use.
            let again = try s.user.passwordSignIn().decode(MFARequired.self).pendingCredential
            #expect(
                try server.json(
                    "POST", "/v1/sessions/mfa",
                    ["pending_credential": again, "enrollment_id": s.deviceID, "approval_id": approval]
                ).status == 400)
        }
    }

    @Test("picking the wrong number ends the whole sign-in and is audited as a possible fatigue attack")
    func wrongNumber() throws {
        try Backend.all[0].withServer { server throws in
            let s = try Self.setup(server, email: "fatigue@example.com")
            let pending = try s.user.passwordSignIn().decode(MFARequired.self).pendingCredential
            let challenge = try server.json(
                "POST", "/v1/mfa/sign-in/challenges", ["pending_credential": pending, "enrollment_id": s.deviceID])
            let approval = try #require(try challenge.decode(ChallengeSent.self).approvalID)
            let number = try #require(try challenge.decode(ChallengeSent.self).number)
            #expect(
                try Self.decide(s, approval, "approve", number == 99 ? 98 : number + 1).decode(ApprovalState.self)
                    .status == "denied")
            #expect(try server.auditKinds().contains("push.wrong_number"))
            #expect(
                try server.get("/v1/mfa/sign-in/approvals/\(approval)?pending_credential=\(pending)").decode(
                    ApprovalState.self
                ).status == "denied")
            let after = try server.json(
                "POST", "/v1/sessions/mfa",
                ["pending_credential": pending, "enrollment_id": s.deviceID, "approval_id": approval])
            #expect(try after.status == 401 && after.problem.code == "invalid_pending_credential")
            // No new push for that sign-in either.
            #expect(
                try server.json(
                    "POST", "/v1/mfa/sign-in/challenges", ["pending_credential": pending, "enrollment_id": s.deviceID]
                ).status == 401)
        }
    }

    @Test("approvals expire after 2 minutes, and a user gets at most 3 pushes per 10 minutes")
    func expiryAndLimit() throws {
        try Backend.all[0].withServer { server throws in
            let s = try Self.setup(server, email: "expire@example.com")
            let pending = try s.user.passwordSignIn().decode(MFARequired.self).pendingCredential
            var ids: [String] = []
            for _ in 0..<3 {
                let c = try server.json(
                    "POST", "/v1/mfa/sign-in/challenges", ["pending_credential": pending, "enrollment_id": s.deviceID])
                ids.append(try #require(try c.decode(ChallengeSent.self).approvalID))
            }
            // Past the limit the device can still sign; only the push is withheld.
            let fourth = try server.json(
                "POST", "/v1/mfa/sign-in/challenges", ["pending_credential": pending, "enrollment_id": s.deviceID])
            let withheld = try fourth.decode(ChallengeSent.self)
            #expect(fourth.status == 202 && withheld.approvalID == nil && withheld.challenge != nil)
            server.clock.advance(121)
            #expect(
                try server.get("/v1/mfa/sign-in/approvals/\(ids[0])?pending_credential=\(pending)").decode(
                    ApprovalState.self
                ).status == "expired")
            #expect(try Self.poll(s).decode(PendingApprovals.self).approvals.isEmpty)
            #expect(try Self.decide(s, ids[0], "approve", 10).status == 404)
        }
    }

    @Test("a device's long poll returns as soon as a sign-in asks for approval, and empty after its wait")
    func longPoll() throws {
        try Backend.all[0].withServer { server throws in
            let s = try Self.setup(server, email: "poll@example.com")
            let started = Date()
            let empty = try Self.poll(s, wait: 1)
            #expect(Date().timeIntervalSince(started) >= 0.9)
            #expect(try empty.decode(PendingApprovals.self).approvals.isEmpty)

            let pending = try s.user.passwordSignIn().decode(MFARequired.self).pendingCredential
            let port = server.port
            let id = s.deviceID
            let headers = try Self.deviceHeaders(s)
            let result = Mutex<(count: Int, seconds: Double)>((0, 0))
            let poller = Thread {
                let t0 = Date()
                let r = try? HTTPTestClient(port: port).request(
                    "GET", "/v1/devices/\(id)/approvals?wait=20", headers: headers)
                let count = (try? r?.decode(PendingApprovals.self))??.approvals.count
                result.withLock { $0 = (count ?? -1, Date().timeIntervalSince(t0)) }
            }
            poller.start()
            usleep(300_000)
            #expect(server.server.requestsInFlight >= 1)
            _ = try server.json(
                "POST", "/v1/mfa/sign-in/challenges", ["pending_credential": pending, "enrollment_id": s.deviceID])
            #expect(eventually(5) { result.withLock { $0.count } == 1 })
            #expect(result.withLock { $0.seconds } < 5)
        }
    }
}

@Suite("Device signature headers")
struct DeviceHeaderTests {
    @Test("absurd device times are refused without harm, and the server keeps answering")
    func absurdTime() throws {
        try Backend.all[0].withServer { server throws in
            for time in ["9999999999999999", "-9223372036854775808", "9223372036854775807", "abc"] {
                let r = try server.client().request(
                    "GET", "/v1/devices/x/approvals",
                    headers: ["X-Trifactor-Device-Time": time, "X-Trifactor-Device-Signature": "AAAA"])
                #expect(r.status == 401)
            }
            #expect(try server.get("/health").status == 200)
        }
    }
}

@Suite("Passwordless push sign-in")
struct PasswordlessPushTests {
    @Test("with only the email, the device approves and the sign-in gets an AAL1 hwk session", arguments: Backend.all)
    func approve(backend: Backend) throws {
        try backend.withServer { server throws in
            let s = try PushApprovalTests.setup(server, email: "nopass@example.com")
            let started = try server.json("POST", "/v1/sessions/push", ["email": "nopass@example.com"])
            #expect(started.status == 202)
            let push = try started.decode(PushSignInStarted.self)
            let pending = push.pendingCredential
            let approval = push.approvalID
            let number = push.number
            #expect(try PushApprovalTests.poll(s).decode(PendingApprovals.self).approvals.first?.approvalID == approval)
            // Before the approval nothing completes.
            #expect(
                try server.json(
                    "POST", "/v1/sessions/push/complete", ["pending_credential": pending, "approval_id": approval]
                ).status == 400)
            #expect(
                try PushApprovalTests.decide(s, approval, "approve", number).decode(ApprovalState.self).status
                    == "approved")
            let done = try server.json(
                "POST", "/v1/sessions/push/complete", ["pending_credential": pending, "approval_id": approval])
            #expect(done.status == 201)
            let session = try done.decode(SessionCreated.self).session
            #expect(session.aal == 1 && session.methods == ["hwk"])
            // Its pending credential never stands in for a password at the second step.
            #expect(
                try server.json(
                    "POST", "/v1/sessions/mfa",
                    ["pending_credential": pending, "enrollment_id": s.deviceID, "approval_id": approval]
                ).status == 401)
        }
    }

    @Test("an unknown address and one without a device get the same answers as a real one, and the same limit")
    func noEnumeration() throws {
        try Backend.all[0].withServer { server throws in
            _ = try PushApprovalTests.setup(server, email: "real@example.com")
            _ = try MFAClient(server, email: "nodevice@example.com")
            for email in ["real@example.com", "nodevice@example.com", "ghost@example.com"] {
                let started = try server.json("POST", "/v1/sessions/push", ["email": email])
                #expect(started.status == 202)
                // The wire shape itself: the same keys for every address.
                #expect(Set(try started.wireObject().keys) == ["pending_credential", "approval_id", "number"])
                let push = try started.decode(PushSignInStarted.self)
                let pending = push.pendingCredential
                let approval = push.approvalID
                #expect(
                    try server.get("/v1/mfa/sign-in/approvals/\(approval)?pending_credential=\(pending)").decode(
                        ApprovalState.self
                    ).status == "pending")
                #expect(
                    try server.json(
                        "POST", "/v1/sessions/push/complete", ["pending_credential": pending, "approval_id": approval]
                    ).status == 400)
                for _ in 0..<2 { _ = try server.json("POST", "/v1/sessions/push", ["email": email]) }
                #expect(try server.json("POST", "/v1/sessions/push", ["email": email]).status == 429)
            }
            server.clock.advance(121)
            let listed = try server.database.transaction {
                try $0.query("SELECT id FROM push_approvals WHERE factor_id = ''", [])
            }
            #expect(listed.count == 6)  // the decoys, which no device ever sees
        }
    }
}
