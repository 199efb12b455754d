import Foundation
import Testing
@testable import TrifactorServer
import TrifactorTestSupport

@Suite("Device-bound keys")
struct DeviceKeyTests {
    /// Enrolls `device` for `user`; returns the enrollment id.
    static func enroll(_ user: MFAClient, _ device: DeviceKey, name: String = "Ann's iPhone") throws -> String {
        let begin = try user.call("POST", "/v1/mfa/enrollments", ["kind": "device", "public_key": try device.publicKey, "device_name": name])
        guard begin.status == 202, let session = begin.json["enrollment_session"] as? String, let challenge = begin.json["challenge"] as? String else {
            throw HTTPTestClient.Failure(description: "enroll device: \(begin.text)")
        }
        let done = try user.call("POST", "/v1/mfa/enrollments/\(session)", ["signature": try device.sign(purpose: "enroll", challenge: challenge)])
        guard done.status == 201, let id = done.json["enrollment_id"] as? String else { throw HTTPTestClient.Failure(description: "finish device: \(done.text)") }
        return id
    }

    @Test("a device enrolls its P-256 public key by signing the challenge; other keys and bad signatures are refused", arguments: Backend.all)
    func enrollment(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "device@example.com")
            let ed25519 = "MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE="
            #expect(try user.call("POST", "/v1/mfa/enrollments", ["kind": "device", "public_key": ed25519, "device_name": "x"]).status == 422)
            let device = try DeviceKey()
            let begin = try user.call("POST", "/v1/mfa/enrollments", ["kind": "device", "public_key": try device.publicKey, "device_name": "Ann's iPhone"])
            #expect(begin.status == 202)
            let session = try #require(begin.json["enrollment_session"] as? String)
            let challenge = try #require(begin.json["challenge"] as? String)
            let other = try DeviceKey()
            #expect(try user.call("POST", "/v1/mfa/enrollments/\(session)", ["signature": try other.sign(purpose: "enroll", challenge: challenge)]).status == 400)
            #expect(try user.call("POST", "/v1/mfa/enrollments/\(session)", ["signature": try device.sign(purpose: "signin", challenge: challenge)]).status == 400)
            let done = try user.call("POST", "/v1/mfa/enrollments/\(session)", ["signature": try device.sign(purpose: "enroll", challenge: challenge)])
            #expect(done.status == 201)
            #expect(done.json["kind"] as? String == "device" && done.json["display_name"] as? String == "Ann's iPhone")
        }
    }

    @Test("one key is one factor: bytes after the key are refused, and another encoding of an enrolled key is a duplicate", arguments: Backend.all)
    func oneKeyOneFactor(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "device@example.com")
            try user.stepUp(try user.enrollTOTP())
            let device = try DeviceKey()
            _ = try Self.enroll(user, device)
            let der = try #require(Data(base64Encoded: try device.publicKey))
            for trailing: [UInt8] in [[0x00], [0x30, 0x00], Array(repeating: 0x41, count: 40)] {
                let padded = (der + trailing).base64EncodedString()
                let response = try user.call("POST", "/v1/mfa/enrollments", ["kind": "device", "public_key": padded, "device_name": "Again"])
                #expect(response.status == 422)
                #expect((response.json["invalid_params"] as? [[String: Any]])?.first?["name"] as? String == "public_key")
            }
            let compressed = try user.call("POST", "/v1/mfa/enrollments", ["kind": "device", "public_key": try device.compressedPublicKey, "device_name": "Again"])
            #expect(compressed.status == 409)
            #expect(compressed.json["code"] as? String == "second_factor_exists")
            let factors = try user.call("GET", "/v1/mfa/enrollments").json["enrollments"] as? [[String: Any]]
            #expect(factors?.filter { $0["kind"] as? String == "device" }.count == 1)
        }
    }

    @Test("sign-in with a device signature: AAL2 with hwk, the device recorded on the session, each challenge once", arguments: Backend.all)
    func signIn(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "devsign@example.com")
            let device = try DeviceKey()
            let id = try Self.enroll(user, device)
            let first = try user.passwordSignIn()
            let pending = try #require(first.json["pending_credential"] as? String)
            #expect((first.json["hints"] as? [[String: Any]])?.first?["kind"] as? String == "device")
            let challenge = try server.json("POST", "/v1/mfa/sign-in/challenges", ["pending_credential": pending, "enrollment_id": id])
            #expect(challenge.status == 202 && challenge.json["purpose"] as? String == "signin")
            let c = try #require(challenge.json["challenge"] as? String)
            // A signature for another purpose does not sign in.
            let wrongPurpose = try device.sign(purpose: "stepup", challenge: c)
            #expect(try server.json("POST", "/v1/sessions/mfa", ["pending_credential": pending, "enrollment_id": id, "code": wrongPurpose]).status == 400)
            let signature = try device.sign(purpose: "signin", challenge: c)
            let done = try server.json("POST", "/v1/sessions/mfa", ["pending_credential": pending, "enrollment_id": id, "code": signature])
            #expect(done.status == 201)
            #expect((done.json["session"] as? [String: Any])?["methods"] as? [String] == ["pwd", "hwk"])
            let token = try #require(done.json["token"] as? String)
            let sessions = try #require(try user.call("GET", "/v1/sessions", token: token).json["sessions"] as? [[String: Any]])
            #expect(sessions.first { $0["current"] as? Bool == true }?["device_id"] as? String == id)
            // The same challenge and signature cannot sign in again.
            let again = try #require(try user.passwordSignIn().json["pending_credential"] as? String)
            #expect(try server.json("POST", "/v1/sessions/mfa", ["pending_credential": again, "enrollment_id": id, "code": signature]).status == 400)
        }
    }

    @Test("a device approves a bound action by signing its hash; a signature over another action fails")
    func boundAction() throws {
        try Backend.all[0].withServer { server throws in
            let user = try MFAClient(server, email: "devpay@example.com")
            let device = try DeviceKey()
            let id = try Self.enroll(user, device)
            let created = try user.call("POST", "/v1/authorizations", ["action": ["type": "transfer", "amount": "99.00", "currency": "EUR", "payee": "Carol"],
                                                                        "enrollment_id": id])
            #expect(created.status == 202)
            let authz = try #require(created.json["authorization_id"] as? String)
            let challenge = try #require(created.json["challenge"] as? String)
            let hash = try #require(created.json["action_hash"] as? String)
            let other = String(repeating: "0", count: 64)
            #expect(try user.call("POST", "/v1/authorizations/\(authz)", ["code": try device.sign(purpose: "authz", challenge: challenge, action: other)]).status == 400)
            let approved = try user.call("POST", "/v1/authorizations/\(authz)", ["code": try device.sign(purpose: "authz", challenge: challenge, action: hash)])
            #expect(approved.status == 200)
        }
    }
}
