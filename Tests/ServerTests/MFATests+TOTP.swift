import API
import Core
import Crypto
import Foundation
import ServerTestSupport
import Store
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

extension MFATests {
    @Test("an authenticator app may use SHA256 or SHA512 and 8 digits; other parameters are refused")
    func totpParameters() throws {
        try Backend.all[0].withServer { server throws in
            let user = try MFAClient(server, email: "sha@example.com")
            #expect(try user.call("POST", "/v1/mfa/enrollments", ["kind": "totp", "algorithm": "MD5"]).status == 422)
            #expect(try user.call("POST", "/v1/mfa/enrollments", ["kind": "totp", "digits": 7]).status == 422)
            let begin = try user.call(
                "POST", "/v1/mfa/enrollments", ["kind": "totp", "algorithm": "sha256", "digits": 8])
            let secret = try #require(try begin.decode(EnrollmentStarted.self).secret)
            #expect(
                try begin.decode(EnrollmentStarted.self).otpauthURI?.hasSuffix("&algorithm=SHA256&digits=8&period=30")
                    == true)
            let session = try begin.decode(EnrollmentStarted.self).enrollmentSession
            // SHA1, 6 digits: wrong.
            #expect(try user.call("POST", "/v1/mfa/enrollments/\(session)", ["code": user.totp(secret)]).status == 400)
            let done = try user.call(
                "POST", "/v1/mfa/enrollments/\(session)", ["code": user.totp(secret, digits: 8, algorithm: .sha256)])
            #expect(done.status == 201)
            let id = try done.decode(EnrolledFactor.self).enrollmentID
            let pending = try user.passwordSignIn().decode(MFARequired.self).pendingCredential
            let signIn = try server.json(
                "POST", "/v1/sessions/mfa",
                [
                    "pending_credential": pending, "enrollment_id": id,
                    "code": user.totp(secret, offset: 1, digits: 8, algorithm: .sha256),
                ])
            #expect(signIn.status == 201)
        }
    }

    @Test("a TOTP code is accepted one step either side, refused two steps away, and never twice")
    func totpWindowAndReplay() throws {
        try Backend.all[0].withServer { server throws in
            let user = try MFAClient(server, email: "win@example.com")
            let totp = try user.enrollTOTP()
            func attempt(_ code: String) throws -> Int {
                let pending = try user.passwordSignIn().decode(MFARequired.self).pendingCredential
                return try server.json(
                    "POST", "/v1/sessions/mfa", ["pending_credential": pending, "enrollment_id": totp.id, "code": code]
                ).status
            }
            server.clock.advance(120)
            #expect(try attempt(user.totp(totp.secret, offset: -2)) == 400)
            #expect(try attempt(user.totp(totp.secret, offset: 2)) == 400)
            #expect(try attempt(user.totp(totp.secret, offset: -1)) == 201)
            #expect(try attempt(user.totp(totp.secret, offset: -1)) == 400)  // replay
            #expect(try attempt(user.totp(totp.secret)) == 201)
            #expect(try attempt(user.totp(totp.secret)) == 400)  // replay in the same step
            #expect(try attempt(user.totp(totp.secret, offset: 1)) == 201)
        }
    }
}
