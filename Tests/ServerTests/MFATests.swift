import Core
import Crypto
import Foundation
import Testing
@testable import TrifactorServer
import TrifactorTestSupport

@Suite("Second factors: enrollment and sign-in")
struct MFATests {
    @Test("TOTP enrollment hands out a base32 secret, an otpauth URI and a QR code, and stores the secret sealed", arguments: Backend.all)
    func totpEnrollment(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "totp@example.com")
            let begin = try user.call("POST", "/v1/mfa/enrollments", ["kind": "totp"])
            #expect(begin.status == 202)
            let secret = try #require(begin.json["secret"] as? String)
            #expect(Base32.decode(secret)?.count == 20)
            #expect(begin.json["otpauth_uri"] as? String == "otpauth://totp/Trifactor:totp@example.com?secret=\(secret)&issuer=Trifactor&algorithm=SHA1&digits=6&period=30")
            #expect((begin.json["qr_svg"] as? String)?.hasPrefix("<svg") == true)
            let session = try #require(begin.json["enrollment_session"] as? String)
            #expect(try user.call("POST", "/v1/mfa/enrollments/\(session)", ["code": "000000"]).status == 400 || user.totp(secret) == "000000")
            let done = try user.call("POST", "/v1/mfa/enrollments/\(session)", ["code": user.totp(secret), "display_name": "Pixel"])
            #expect(done.status == 201)
            #expect(done.json["kind"] as? String == "totp" && done.json["display_name"] as? String == "Pixel")
            let enrolledID = try #require(done.json["enrollment_id"] as? String)
            try user.stepUp((enrolledID, secret))
            #expect(try user.call("POST", "/v1/mfa/enrollments/\(session)", ["code": user.totp(secret)]).status == 404)
            let sealed = try server.database.transaction { try $0.queryOne("SELECT secret_sealed FROM mfa_factors")!.text("secret_sealed") }
            #expect(!sealed.contains(secret))
            let listed = try user.call("GET", "/v1/mfa/enrollments").json["enrollments"] as? [[String: Any]]
            #expect(listed?.count == 1 && listed?.first?["kind"] as? String == "totp")
        }
    }

    @Test("with a second factor, the password alone yields a pending credential and hints, never a session", arguments: Backend.all)
    func pendingCredential(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "pend@example.com")
            let totp = try user.enrollTOTP()
            let sessionsBefore = try server.database.transaction { try $0.queryOne("SELECT COUNT(*) AS n FROM sessions")!.int("n") }
            let first = try user.passwordSignIn()
            #expect(first.status == 200)
            #expect(first.json["mfa_required"] as? Bool == true && first.json["token"] == nil)
            let hints = try #require(first.json["hints"] as? [[String: Any]])
            #expect(hints.map { $0["kind"] as? String } == ["totp"])
            #expect(hints.first?["enrollment_id"] as? String == totp.id)
            #expect(try server.database.transaction { try $0.queryOne("SELECT COUNT(*) AS n FROM sessions")!.int("n") } == sessionsBefore)
            let pending = try #require(first.json["pending_credential"] as? String)
            #expect(try server.json("POST", "/v1/mfa/sign-in/challenges", ["pending_credential": pending, "enrollment_id": totp.id]).status == 202)
            // The enrollment used the current step: the next one signs in.
            let done = try server.json("POST", "/v1/sessions/mfa", ["pending_credential": pending, "enrollment_id": totp.id, "code": user.totp(totp.secret, offset: 1)])
            #expect(done.status == 201)
            let session = try #require(done.json["session"] as? [String: Any])
            #expect(session["aal"] as? Int == 2 && session["methods"] as? [String] == ["pwd", "otp"])
            // Single use.
            let again = try server.json("POST", "/v1/sessions/mfa", ["pending_credential": pending, "enrollment_id": totp.id, "code": user.totp(totp.secret, offset: 1)])
            #expect(again.status == 401 && again.json["code"] as? String == "invalid_pending_credential")
            let token = try #require(done.json["token"] as? String)
            #expect((try server.get("/v1/session", token: token).json["session"] as? [String: Any])?["aal"] as? Int == 2)
        }
    }

    @Test("an authenticator app may use SHA256 or SHA512 and 8 digits; other parameters are refused")
    func totpParameters() throws {
        try Backend.all[0].withServer { server throws in
            let user = try MFAClient(server, email: "sha@example.com")
            #expect(try user.call("POST", "/v1/mfa/enrollments", ["kind": "totp", "algorithm": "MD5"]).status == 422)
            #expect(try user.call("POST", "/v1/mfa/enrollments", ["kind": "totp", "digits": 7]).status == 422)
            let begin = try user.call("POST", "/v1/mfa/enrollments", ["kind": "totp", "algorithm": "sha256", "digits": 8])
            let secret = try #require(begin.json["secret"] as? String)
            #expect((begin.json["otpauth_uri"] as? String)?.hasSuffix("&algorithm=SHA256&digits=8&period=30") == true)
            let session = try #require(begin.json["enrollment_session"] as? String)
            #expect(try user.call("POST", "/v1/mfa/enrollments/\(session)", ["code": user.totp(secret)]).status == 400)  // SHA1, 6 digits: wrong
            let done = try user.call("POST", "/v1/mfa/enrollments/\(session)", ["code": user.totp(secret, digits: 8, algorithm: .sha256)])
            #expect(done.status == 201)
            let id = try #require(done.json["enrollment_id"] as? String)
            let pending = try #require(try user.passwordSignIn().json["pending_credential"] as? String)
            let signIn = try server.json("POST", "/v1/sessions/mfa", ["pending_credential": pending, "enrollment_id": id,
                                                                      "code": user.totp(secret, offset: 1, digits: 8, algorithm: .sha256)])
            #expect(signIn.status == 201)
        }
    }

    @Test("a TOTP code is accepted one step either side, refused two steps away, and never twice")
    func totpWindowAndReplay() throws {
        try Backend.all[0].withServer { server throws in
            let user = try MFAClient(server, email: "win@example.com")
            let totp = try user.enrollTOTP()
            func attempt(_ code: String) throws -> Int {
                let pending = try #require(try user.passwordSignIn().json["pending_credential"] as? String)
                return try server.json("POST", "/v1/sessions/mfa", ["pending_credential": pending, "enrollment_id": totp.id, "code": code]).status
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

    @Test("a phone factor: enrollment and sign-in by SMS code, masked hints", arguments: Backend.all)
    func phone(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "phone@example.com")
            let begin = try user.call("POST", "/v1/mfa/enrollments", ["kind": "phone", "phone": "(415) 555-0100", "country": "US"])
            #expect(begin.status == 202)
            #expect(begin.json["masked_phone"] as? String == "+*******0100")
            let session = try #require(begin.json["enrollment_session"] as? String)
            let code = try #require(try user.lastSMSCode("14155550100"))
            let enrolled = try user.call("POST", "/v1/mfa/enrollments/\(session)", ["code": code])
            #expect(enrolled.status == 201)
            let phoneID = try #require(enrolled.json["enrollment_id"] as? String)
            #expect(try user.call("POST", "/v1/session/step-up", ["enrollment_id": phoneID]).status == 202)
            #expect(try user.call("POST", "/v1/session/step-up", ["enrollment_id": phoneID, "code": try #require(try user.lastSMSCode("14155550100"))]).status == 200)
            #expect(try user.call("POST", "/v1/mfa/enrollments", ["kind": "phone", "phone": "+14155550100"]).json["code"] as? String == "second_factor_exists")

            let first = try user.passwordSignIn()
            let hint = try #require((first.json["hints"] as? [[String: Any]])?.first)
            #expect(hint["masked_phone"] as? String == "+*******0100")
            let pending = try #require(first.json["pending_credential"] as? String)
            let id = try #require(hint["enrollment_id"] as? String)
            #expect(try server.json("POST", "/v1/mfa/sign-in/challenges", ["pending_credential": pending, "enrollment_id": id]).status == 202)
            #expect(try user.lastSMS("14155550100")?.contains("Your sign-in code") == true)
            let signInCode = try #require(try user.lastSMSCode("14155550100"))
            let done = try server.json("POST", "/v1/sessions/mfa", ["pending_credential": pending, "enrollment_id": id, "code": signInCode])
            #expect(done.status == 201)
            #expect((done.json["session"] as? [String: Any])?["methods"] as? [String] == ["pwd", "sms"])
        }
    }

    @Test("enrolling needs a verified email, a fresh proof, and stays within ten factors; a fixed line is refused")
    func enrollmentRules() throws {
        try Backend.all[0].withServer { server throws in
            let unverified = try MFAClient(server, email: "unv@example.com", verify: false)
            #expect(try unverified.call("POST", "/v1/mfa/enrollments", ["kind": "totp"]).json["code"] as? String == "unverified_email")
            let user = try MFAClient(server, email: "rules@example.com")
            #expect(try user.call("POST", "/v1/mfa/enrollments", ["kind": "phone", "phone": "+441212345678"]).status == 422)
            #expect(try user.call("POST", "/v1/mfa/enrollments", ["kind": "fingerprint"]).status == 422)
            let first = try user.enrollTOTP(name: "app 0")
            // With a factor, the next one needs a fresh second-factor proof, not just the password.
            #expect(try user.call("POST", "/v1/mfa/enrollments", ["kind": "totp"]).json["code"] as? String == "second_factor_required")
            for i in 1..<10 {
                try user.stepUp(first)
                _ = try user.enrollTOTP(name: "app \(i)")
            }
            try user.stepUp(first)
            #expect(try user.call("POST", "/v1/mfa/enrollments", ["kind": "totp"]).json["code"] as? String == "second_factor_limit_exceeded")
            let fresh = try MFAClient(server, email: "stale@example.com")
            server.clock.advance(301)
            let stale = try fresh.call("POST", "/v1/mfa/enrollments", ["kind": "totp"])
            #expect(stale.status == 401 && stale.json["code"] as? String == "reauthentication_required")
        }
    }

    @Test("factor names are checked before anything is spent: too long or with control characters is a 422")
    func names() throws {
        try Backend.all[0].withServer { server throws in
            let user = try MFAClient(server, email: "names@example.com")
            let long = String(repeating: "x", count: 65)
            #expect(try user.call("POST", "/v1/mfa/enrollments", ["kind": "passkey", "device_name": long]).status == 422)
            #expect(try user.call("POST", "/v1/mfa/enrollments", ["kind": "device", "public_key": try DeviceKey().publicKey, "device_name": "a\u{7}b"]).status == 422)
            let begin = try user.call("POST", "/v1/mfa/enrollments", ["kind": "totp"])
            let session = try #require(begin.json["enrollment_session"] as? String)
            let secret = try #require(begin.json["secret"] as? String)
            for _ in 0..<6 {
                #expect(try user.call("POST", "/v1/mfa/enrollments/\(session)", ["code": user.totp(secret), "display_name": long]).status == 422)
            }
            // Six refused names spent none of the five attempts.
            #expect(try user.call("POST", "/v1/mfa/enrollments/\(session)", ["code": user.totp(secret), "display_name": "Phone"]).status == 201)
        }
    }

    @Test("enrolling the first factor ends the user's other password-only sessions")
    func firstFactorEndsOtherSessions() throws {
        try Backend.all[0].withServer { server throws in
            let user = try MFAClient(server, email: "thief@example.com")
            let elsewhere = try #require(try user.passwordSignIn().json["token"] as? String)
            _ = try user.enrollTOTP()
            #expect(try server.get("/v1/session", token: elsewhere).status == 401)
            #expect(try user.call("GET", "/v1/session").status == 200)
        }
    }

    @Test("a pending credential expires after 5 minutes and only works for its own user's factors")
    func pendingRules() throws {
        try Backend.all[0].withServer { server throws in
            let alice = try MFAClient(server, email: "alice@example.com")
            let aliceTOTP = try alice.enrollTOTP()
            let bob = try MFAClient(server, email: "bob@example.com")
            let bobTOTP = try bob.enrollTOTP()
            let pending = try #require(try alice.passwordSignIn().json["pending_credential"] as? String)
            let other = try server.json("POST", "/v1/sessions/mfa", ["pending_credential": pending, "enrollment_id": bobTOTP.id, "code": bob.totp(bobTOTP.secret, offset: 1)])
            #expect(other.status == 404)
            server.clock.advance(301)
            let late = try server.json("POST", "/v1/sessions/mfa", ["pending_credential": pending, "enrollment_id": aliceTOTP.id, "code": alice.totp(aliceTOTP.secret)])
            #expect(late.status == 401 && late.json["code"] as? String == "invalid_pending_credential")
            #expect(try server.json("POST", "/v1/sessions/mfa", ["pending_credential": "junk", "enrollment_id": aliceTOTP.id, "code": "123456"]).status == 401)
        }
    }

    @Test("ten wrong second-factor codes lock the second step, the right code included; time and a success reset it", arguments: Backend.all)
    func lockout(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "lock@example.com")
            let totp = try user.enrollTOTP()
            let pending = try #require(try user.passwordSignIn().json["pending_credential"] as? String)
            func attempt(_ code: String) throws -> HTTPTestClient.Response {
                try server.json("POST", "/v1/sessions/mfa", ["pending_credential": pending, "enrollment_id": totp.id, "code": code])
            }
            let wrong = user.totp(totp.secret, offset: 1) == "000000" ? "111111" : "000000"
            for _ in 0..<10 { #expect(try attempt(wrong).status == 400) }
            let locked = try attempt(user.totp(totp.secret, offset: 1))
            #expect(locked.status == 429 && locked.json["code"] as? String == "too_many_attempts")
            server.clock.advance(6)
            #expect(try attempt(user.totp(totp.secret, offset: 1)).status == 201)
            #expect(try server.auditKinds().contains("mfa.locked"))
        }
    }
}
