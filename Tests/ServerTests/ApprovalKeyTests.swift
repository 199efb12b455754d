import API
import Core
import Foundation
import ServerTestSupport
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

/// A device with its two keys: `device` signs polls and denials, `approval`
/// (released on the phone only after Face ID) signs everything that needs the user.
struct BoundDevice {
    let device = try! DeviceKey()
    let approval = try! DeviceKey()
    let id: String

    /// Enrolls both keys for `user` with `gate` (and `biometry`).
    init(_ user: MFAClient, gate: String = "biometry", biometry: String? = "face_id") throws {
        var body: [String: Any] = [
            "kind": "device", "public_key": try device.publicKey, "device_name": "Ann's iPhone",
            "approval_key": try approval.publicKey, "approval_key_gate": gate,
        ]
        if let biometry { body["biometry"] = biometry }
        let begin = try user.call("POST", "/v1/mfa/enrollments", body)
        guard begin.status == 202 else { throw HTTPTestClient.Failure(description: "enroll: \(begin.text)") }
        let started = try begin.decode(EnrollmentStarted.self)
        let challenge = try #require(started.challenge)
        let done = try user.call(
            "POST", "/v1/mfa/enrollments/\(started.enrollmentSession)",
            [
                "signature": try device.sign(purpose: "enroll", challenge: challenge),
                "approval_signature": try approval.sign(
                    purpose: "enroll", challenge: challenge, action: "approval-key"),
            ])
        guard done.status == 201 else { throw HTTPTestClient.Failure(description: "finish: \(done.text)") }
        id = try done.decode(EnrolledFactor.self).enrollmentID
    }
}

@Suite("Device approval keys: approvals the server checks against a key released only by the user's check")
struct ApprovalKeyTests {
    static func decide(
        _ server: TestServer, _ device: BoundDevice, _ approval: String, _ decision: String, _ number: Int,
        signer: DeviceKey
    ) throws -> HTTPTestClient.Response {
        let time = Int64(server.clock.clock.now().timeIntervalSince1970)
        let headers = [
            "Content-Type": "application/json", "X-Trifactor-Device-Time": String(time),
            "X-Trifactor-Device-Signature": try device.device.sign(purpose: "poll", challenge: "\(device.id):\(time)"),
        ]
        let signature = try signer.sign(purpose: "push", challenge: approval, action: "\(decision):\(number)")
        let body = try JSONSerialization.data(withJSONObject: [
            "decision": decision, "number": number, "signature": signature,
        ])
        return try server.client().request(
            "POST", "/v1/devices/\(device.id)/approvals/\(approval)", headers: headers, body: Array(body))
    }

    @Test(
        "enrolling needs both keys' signatures; the factor is listed as approval-bound with its gate",
        arguments: Backend.all)
    func enrollment(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "bound@example.com")
            try user.stepUp(try user.enrollTOTP())
            let device = try DeviceKey()
            let approval = try DeviceKey()
            let begin = try user.call(
                "POST", "/v1/mfa/enrollments",
                [
                    "kind": "device", "public_key": try device.publicKey, "device_name": "Phone",
                    "approval_key": try approval.publicKey, "approval_key_gate": "biometry_or_passcode",
                ])
            let started = try begin.decode(EnrollmentStarted.self)
            let challenge = try #require(started.challenge)
            let path = "/v1/mfa/enrollments/\(started.enrollmentSession)"
            // Without the approval key's signature (a 422 naming it), or with the device key standing in for it: refused.
            let unsigned = try user.call(
                "POST", path, ["signature": try device.sign(purpose: "enroll", challenge: challenge)])
            #expect(unsigned.status == 422)
            #expect(try unsigned.problem.invalidParams?.first?.name == "approval_signature")
            let empty = try user.call(
                "POST", path,
                ["signature": try device.sign(purpose: "enroll", challenge: challenge), "approval_signature": " "])
            #expect(empty.status == 422)
            #expect(try empty.problem.invalidParams?.first?.name == "approval_signature")
            #expect(
                try user.call(
                    "POST", path,
                    [
                        "signature": try device.sign(purpose: "enroll", challenge: challenge),
                        "approval_signature": try device.sign(
                            purpose: "enroll", challenge: challenge, action: "approval-key"),
                    ]
                ).status == 400)
            let done = try user.call(
                "POST", path,
                [
                    "signature": try device.sign(purpose: "enroll", challenge: challenge),
                    "approval_signature": try approval.sign(
                        purpose: "enroll", challenge: challenge, action: "approval-key"),
                ])
            #expect(done.status == 201, "\(done.text)")
            let listed = try user.call("GET", "/v1/mfa/enrollments").decode(EnrolledFactors.self).enrollments.first {
                $0.kind == "device"
            }
            #expect(listed?.approvalBound == true && listed?.approvalGate == "biometry_or_passcode")
            // Either key of an enrolled device is a duplicate.
            let again = try user.call(
                "POST", "/v1/mfa/enrollments",
                ["kind": "device", "public_key": try approval.publicKey, "device_name": "Again"])
            #expect(try again.problem.code == "second_factor_exists")
        }
    }

    @Test(
        "two enrollments at once cannot give one key to two devices: the second finish is refused",
        arguments: Backend.all)
    func concurrentEnrollments(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "twice@example.com")
            try user.stepUp(try user.enrollTOTP())
            let shared = try DeviceKey()
            let devices = [try DeviceKey(), try DeviceKey()]
            // Both start before either finishes, so neither start sees the other's key.
            let starts = try devices.map { device in
                try user.call(
                    "POST", "/v1/mfa/enrollments",
                    [
                        "kind": "device", "public_key": try device.publicKey, "device_name": "Phone",
                        "approval_key": try shared.publicKey, "approval_key_gate": "biometry_or_passcode",
                    ]
                )
                .decode(EnrollmentStarted.self)
            }
            let finishes = try zip(devices, starts).map { device, started in
                let challenge = try #require(started.challenge)
                return try user.call(
                    "POST", "/v1/mfa/enrollments/\(started.enrollmentSession)",
                    [
                        "signature": try device.sign(purpose: "enroll", challenge: challenge),
                        "approval_signature": try shared.sign(
                            purpose: "enroll", challenge: challenge, action: "approval-key"),
                    ])
            }
            #expect(finishes[0].status == 201)
            #expect(try finishes[1].problem.code == "second_factor_exists")
            #expect(
                try user.call("GET", "/v1/mfa/enrollments").decode(EnrolledFactors.self).enrollments.filter {
                    $0.kind == "device"
                }.count == 1)
            #expect(
                try server.auditDetails("mfa.enrolled").contains {
                    $0.contains("kind=device") && $0.contains("approval_key=biometry_or_passcode")
                })
        }
    }

    @Test(
        "bad approval keys are refused naming the field: the device key again, an unknown gate, biometry for a passphrase",
        arguments: Backend.all)
    func refusals(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "badbound@example.com")
            let device = try DeviceKey()
            let approval = try DeviceKey()
            let base: [String: Any] = ["kind": "device", "public_key": try device.publicKey, "device_name": "Phone"]
            for (extra, field) in [
                (["approval_key": try device.publicKey, "approval_key_gate": "biometry"], "approval_key"),
                (["approval_key": try approval.publicKey, "approval_key_gate": "face"], "approval_key_gate"),
                (["approval_key": try approval.publicKey], "approval_key_gate"),
                (
                    ["approval_key": try approval.publicKey, "approval_key_gate": "passphrase", "biometry": "face_id"],
                    "biometry"
                ),
                (
                    ["approval_key": try approval.publicKey, "approval_key_gate": "biometry", "biometry": "retina"],
                    "biometry"
                ),
                (["approval_key": "bm90IGEga2V5", "approval_key_gate": "biometry"], "approval_key"),
                (["approval_key_gate": "biometry"], "approval_key"),
            ] as [([String: String], String)] {
                let response = try user.call("POST", "/v1/mfa/enrollments", base.merging(extra) { $1 })
                #expect(response.status == 422, "\(extra)")
                #expect(try response.problem.invalidParams?.first?.name == field, "\(extra)")
            }
        }
    }

    @Test(
        "approvals are checked against the approval key only; polls and denials against the device key; amr says face",
        arguments: Backend.all)
    func pushApproval(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "pushbound@example.com")
            let bound = try BoundDevice(user)
            let pending = try user.passwordSignIn().decode(MFARequired.self).pendingCredential
            let sent = try server.json(
                "POST", "/v1/mfa/sign-in/challenges", ["pending_credential": pending, "enrollment_id": bound.id]
            ).decode(ChallengeSent.self)
            let approval = try #require(sent.approvalID)
            let number = try #require(sent.number)
            // The poll key signing an approval (a hooked "Face ID passed") is refused, and audited.
            #expect(try Self.decide(server, bound, approval, "approve", number, signer: bound.device).status == 401)
            #expect(try server.auditKinds().contains("push.denied"))
            // The approval key cannot sign polls: it prompts, and a poll never asks the user.
            let time = Int64(server.clock.clock.now().timeIntervalSince1970)
            let poll = try server.client().request(
                "GET", "/v1/devices/\(bound.id)/approvals",
                headers: [
                    "X-Trifactor-Device-Time": String(time),
                    "X-Trifactor-Device-Signature": try bound.approval.sign(
                        purpose: "poll", challenge: "\(bound.id):\(time)"),
                ])
            #expect(poll.status == 401)
            #expect(
                try Self.decide(server, bound, approval, "approve", number, signer: bound.approval).decode(
                    ApprovalState.self
                ).status == "approved")
            let done = try server.json(
                "POST", "/v1/sessions/mfa",
                ["pending_credential": pending, "enrollment_id": bound.id, "approval_id": approval])
            #expect(try done.decode(SessionCreated.self).session.methods == ["pwd", "hwk", "face"])
            #expect(try server.auditDetails("mfa.succeeded").contains { $0.contains("approval_key=biometry") })

            // A denial needs nobody: the device key may sign it.
            let next = try user.passwordSignIn().decode(MFARequired.self).pendingCredential
            let second = try server.json(
                "POST", "/v1/mfa/sign-in/challenges", ["pending_credential": next, "enrollment_id": bound.id]
            ).decode(ChallengeSent.self)
            #expect(
                try Self.decide(server, bound, try #require(second.approvalID), "deny", 0, signer: bound.device).decode(
                    ApprovalState.self
                ).status == "denied")
        }
    }

    @Test(
        "step-up, signature sign-in and bound actions take only the approval key's signature; the gate lands in amr",
        arguments: Backend.all)
    func signatures(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "sigbound@example.com")
            let bound = try BoundDevice(user, gate: "passphrase", biometry: nil)
            let pending = try user.passwordSignIn().decode(MFARequired.self).pendingCredential
            let c = try #require(
                try server.json(
                    "POST", "/v1/mfa/sign-in/challenges", ["pending_credential": pending, "enrollment_id": bound.id]
                )
                .decode(ChallengeSent.self).challenge)
            let body = { (signer: DeviceKey) in
                [
                    "pending_credential": pending, "enrollment_id": bound.id,
                    "code": try signer.sign(purpose: "signin", challenge: c),
                ]
            }
            #expect(try server.json("POST", "/v1/sessions/mfa", try body(bound.device)).status == 400)
            let done = try server.json("POST", "/v1/sessions/mfa", try body(bound.approval))
            #expect(try done.decode(SessionCreated.self).session.methods == ["pwd", "swk", "pin"])

            // Step-up on a live session: the poll key's signature is refused, the approval key's raises it with the gate.
            let stepUp = try #require(
                try user.call("POST", "/v1/session/step-up", ["enrollment_id": bound.id]).decode(ChallengeSent.self)
                    .challenge)
            #expect(
                try user.call(
                    "POST", "/v1/session/step-up",
                    [
                        "enrollment_id": bound.id,
                        "code": try bound.device.sign(purpose: "stepup", challenge: stepUp),
                    ]
                ).status == 400)
            let up = try user.call(
                "POST", "/v1/session/step-up",
                ["enrollment_id": bound.id, "code": try bound.approval.sign(purpose: "stepup", challenge: stepUp)])
            let raised = try up.decode(CurrentSession.self).session
            #expect(raised.aal == 2 && raised.methods.suffix(2) == ["swk", "pin"])

            let created = try user.call(
                "POST", "/v1/authorizations",
                [
                    "action": ["type": "transfer", "amount": "99.00", "currency": "EUR", "payee": "Carol"],
                    "enrollment_id": bound.id,
                ]
            ).decode(AuthorizationCreated.self)
            let challenge = try #require(created.challenge)
            let hash = try #require(created.actionHash)
            let path = "/v1/authorizations/\(created.authorizationID)"
            #expect(
                try user.call(
                    "POST", path, ["code": try bound.device.sign(purpose: "authz", challenge: challenge, action: hash)]
                ).status == 400)
            #expect(
                try user.call(
                    "POST", path,
                    ["code": try bound.approval.sign(purpose: "authz", challenge: challenge, action: hash)]
                ).status == 200)
        }
    }

    @Test(
        "a device enrolled without an approval key keeps working and is listed as not bound; amr stays pwd+hwk",
        arguments: Backend.all)
    func unboundDevice(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "oldphone@example.com")
            let device = try DeviceKey()
            let id = try DeviceKeyTests.enroll(user, device)
            let listed = try user.call("GET", "/v1/mfa/enrollments").decode(EnrolledFactors.self).enrollments.first {
                $0.enrollmentID == id
            }
            #expect(listed?.approvalBound == false && listed?.approvalGate == nil)
            let pending = try user.passwordSignIn().decode(MFARequired.self).pendingCredential
            let c = try #require(
                try server.json(
                    "POST", "/v1/mfa/sign-in/challenges", ["pending_credential": pending, "enrollment_id": id]
                )
                .decode(ChallengeSent.self).challenge)
            let done = try server.json(
                "POST", "/v1/sessions/mfa",
                [
                    "pending_credential": pending, "enrollment_id": id,
                    "code": try device.sign(purpose: "signin", challenge: c),
                ])
            #expect(try done.decode(SessionCreated.self).session.methods == ["pwd", "hwk"])
        }
    }

    @Test(
        "TRIFACTOR_DEVICE_APPROVAL_KEY=biometric refuses a device without an approval key and the passcode variant; required takes any gate"
    )
    func operatorPolicy() throws {
        var strict = TestServer.configuration()
        strict.deviceApprovalKeys = .biometric
        try Backend.all[0].withServer(strict) { server throws in
            let user = try MFAClient(server, email: "strict@example.com")
            let device = try DeviceKey()
            let approval = try DeviceKey()
            let bare = try user.call(
                "POST", "/v1/mfa/enrollments",
                ["kind": "device", "public_key": try device.publicKey, "device_name": "Old app"])
            #expect(bare.status == 422)
            #expect(try bare.problem.invalidParams?.first?.name == "approval_key")
            let passcode = try user.call(
                "POST", "/v1/mfa/enrollments",
                [
                    "kind": "device", "public_key": try device.publicKey, "device_name": "Phone",
                    "approval_key": try approval.publicKey, "approval_key_gate": "biometry_or_passcode",
                ])
            #expect(passcode.status == 422)
            #expect(try passcode.problem.invalidParams?.first?.name == "approval_key_gate")
            _ = try BoundDevice(user, gate: "biometry", biometry: "touch_id")
        }
        var required = TestServer.configuration()
        required.deviceApprovalKeys = .required
        try Backend.all[0].withServer(required) { server throws in
            let user = try MFAClient(server, email: "required@example.com")
            let device = try DeviceKey()
            #expect(
                try user.call(
                    "POST", "/v1/mfa/enrollments",
                    ["kind": "device", "public_key": try device.publicKey, "device_name": "Old app"]
                ).status == 422)
            _ = try BoundDevice(user, gate: "passphrase", biometry: nil)
        }
    }
}
