import API
import Foundation
import ServerTestSupport
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

@Suite("Device-bound keys")
struct DeviceKeyTests {
    /// Enrolls `device` for `user`; returns the enrollment id.
    static func enroll(_ user: MFAClient, _ device: DeviceKey, name: String = "Ann's iPhone") throws -> String {
        let begin = try user.call(
            "POST", "/v1/mfa/enrollments", ["kind": "device", "public_key": try device.publicKey, "device_name": name])
        guard begin.status == 202 else { throw HTTPTestClient.Failure(description: "enroll device: \(begin.text)") }
        let started = try begin.decode(EnrollmentStarted.self)
        let session = started.enrollmentSession
        guard let challenge = started.challenge else {
            throw HTTPTestClient.Failure(description: "enroll device: no challenge")
        }
        let done = try user.call(
            "POST", "/v1/mfa/enrollments/\(session)",
            ["signature": try device.sign(purpose: "enroll", challenge: challenge)])
        guard done.status == 201 else { throw HTTPTestClient.Failure(description: "finish device: \(done.text)") }
        return try done.decode(EnrolledFactor.self).enrollmentID
    }

    @Test(
        "a device enrolls its P-256 public key by signing the challenge; other keys and bad signatures are refused",
        arguments: Backend.all)
    func enrollment(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "device@example.com")
            let ed25519 = "MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE="
            #expect(
                try user.call(
                    "POST", "/v1/mfa/enrollments", ["kind": "device", "public_key": ed25519, "device_name": "x"]
                ).status == 422)
            let device = try DeviceKey()
            let begin = try user.call(
                "POST", "/v1/mfa/enrollments",
                ["kind": "device", "public_key": try device.publicKey, "device_name": "Ann's iPhone"])
            #expect(begin.status == 202)
            let session = try begin.decode(EnrollmentStarted.self).enrollmentSession
            let challenge = try #require(try begin.decode(EnrollmentStarted.self).challenge)
            let other = try DeviceKey()
            #expect(
                try user.call(
                    "POST", "/v1/mfa/enrollments/\(session)",
                    ["signature": try other.sign(purpose: "enroll", challenge: challenge)]
                ).status == 400)
            #expect(
                try user.call(
                    "POST", "/v1/mfa/enrollments/\(session)",
                    ["signature": try device.sign(purpose: "signin", challenge: challenge)]
                ).status == 400)
            let done = try user.call(
                "POST", "/v1/mfa/enrollments/\(session)",
                ["signature": try device.sign(purpose: "enroll", challenge: challenge)])
            #expect(done.status == 201)
            let factor = try done.decode(EnrolledFactor.self)
            #expect(factor.kind == "device" && factor.displayName == "Ann's iPhone")
        }
    }

    @Test(
        "one key is one factor: bytes after the key are refused, and another encoding of an enrolled key is a duplicate",
        arguments: Backend.all)
    func oneKeyOneFactor(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "device@example.com")
            try user.stepUp(try user.enrollTOTP())
            let device = try DeviceKey()
            _ = try Self.enroll(user, device)
            let der = try #require(Data(base64Encoded: try device.publicKey))
            for trailing: [UInt8] in [[0x00], [0x30, 0x00], Array(repeating: 0x41, count: 40)] {
                let padded = (der + trailing).base64EncodedString()
                let response = try user.call(
                    "POST", "/v1/mfa/enrollments", ["kind": "device", "public_key": padded, "device_name": "Again"])
                #expect(response.status == 422)
                #expect(try response.problem.invalidParams?.first?.name == "public_key")
            }
            let compressed = try user.call(
                "POST", "/v1/mfa/enrollments",
                ["kind": "device", "public_key": try device.compressedPublicKey, "device_name": "Again"])
            #expect(compressed.status == 409)
            #expect(try compressed.problem.code == "second_factor_exists")
            let factors = try user.call("GET", "/v1/mfa/enrollments").decode(EnrolledFactors.self).enrollments
            #expect(factors.filter { $0.kind == "device" }.count == 1)
        }
    }

    @Test(
        "sign-in with a device signature: AAL2 with hwk, the device recorded on the session, each challenge once",
        arguments: Backend.all)
    func signIn(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "devsign@example.com")
            let device = try DeviceKey()
            let id = try Self.enroll(user, device)
            let first = try user.passwordSignIn()
            let pending = try first.decode(MFARequired.self).pendingCredential
            #expect(try first.decode(MFARequired.self).hints.first?.kind == "device")
            let challenge = try server.json(
                "POST", "/v1/mfa/sign-in/challenges", ["pending_credential": pending, "enrollment_id": id])
            let sent = try challenge.decode(ChallengeSent.self)
            #expect(challenge.status == 202 && sent.purpose == "signin")
            let c = try #require(sent.challenge)
            // A signature for another purpose does not sign in.
            let wrongPurpose = try device.sign(purpose: "stepup", challenge: c)
            #expect(
                try server.json(
                    "POST", "/v1/sessions/mfa",
                    ["pending_credential": pending, "enrollment_id": id, "code": wrongPurpose]
                ).status == 400)
            let signature = try device.sign(purpose: "signin", challenge: c)
            let done = try server.json(
                "POST", "/v1/sessions/mfa", ["pending_credential": pending, "enrollment_id": id, "code": signature])
            #expect(done.status == 201)
            #expect(try done.decode(SessionCreated.self).session.methods == ["pwd", "hwk"])
            let token = try done.decode(SessionCreated.self).token
            let sessions = try user.call("GET", "/v1/sessions", token: token).decode(SessionList.self).sessions
            #expect(sessions.first { $0.current }?.deviceID == id)
            // The same challenge and signature cannot sign in again.
            let again = try user.passwordSignIn().decode(MFARequired.self).pendingCredential
            #expect(
                try server.json(
                    "POST", "/v1/sessions/mfa", ["pending_credential": again, "enrollment_id": id, "code": signature]
                ).status == 400)
        }
    }

    @Test("a device approves a bound action by signing its hash; a signature over another action fails")
    func boundAction() throws {
        try Backend.all[0].withServer { server throws in
            let user = try MFAClient(server, email: "devpay@example.com")
            let device = try DeviceKey()
            let id = try Self.enroll(user, device)
            let created = try user.call(
                "POST", "/v1/authorizations",
                [
                    "action": ["type": "transfer", "amount": "99.00", "currency": "EUR", "payee": "Carol"],
                    "enrollment_id": id,
                ])
            #expect(created.status == 202)
            let authz = try created.decode(AuthorizationCreated.self).authorizationID
            let challenge = try #require(try created.decode(AuthorizationCreated.self).challenge)
            let hash = try #require(try created.decode(AuthorizationCreated.self).actionHash)
            let other = String(repeating: "0", count: 64)
            #expect(
                try user.call(
                    "POST", "/v1/authorizations/\(authz)",
                    ["code": try device.sign(purpose: "authz", challenge: challenge, action: other)]
                ).status == 400)
            let approved = try user.call(
                "POST", "/v1/authorizations/\(authz)",
                ["code": try device.sign(purpose: "authz", challenge: challenge, action: hash)])
            #expect(approved.status == 200)
        }
    }

    @Test(
        "a transfer's challenge sent twice in one millisecond: the device's signature over either works, once",
        arguments: Backend.all)
    func resentInOneMillisecond(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "devtwice@example.com")
            let device = try DeviceKey()
            let id = try Self.enroll(user, device)
            let action: [String: Any] = ["type": "transfer", "amount": "12.00", "currency": "EUR", "payee": "Carol"]
            let created = try user.call("POST", "/v1/authorizations", ["action": action, "enrollment_id": id]).decode(
                AuthorizationCreated.self)
            // A double click: the clock does not move between the two sends.
            let resent = try user.call(
                "POST", "/v1/authorizations/\(created.authorizationID)/challenges", ["action": action])
            #expect(resent.status == 202, "\(resent.text)")
            let second = try resent.decode(AuthorizationCreated.self)
            #expect(try #require(second.challenge) != created.challenge)
            #expect(try server.auditKinds().contains("authorization.resent"))
            // The client signs the challenge of the answer it saw first.
            let signature = try device.sign(
                purpose: "authz", challenge: try #require(created.challenge), action: try #require(created.actionHash))
            #expect(
                try user.call("POST", "/v1/authorizations/\(created.authorizationID)", ["code": signature]).status
                    == 200)
            #expect(
                try user.call("POST", "/v1/authorizations/\(created.authorizationID)", ["code": signature]).status
                    == 404)
        }
    }
}
