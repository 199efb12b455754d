import API
import Core
import Crypto
import Foundation
import ServerTestSupport
import Store
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

@Suite("Second factors: enrollment and sign-in")
struct MFATests {
    @Test(
        "TOTP enrollment hands out a base32 secret, an otpauth URI and a QR code, and stores the secret sealed",
        arguments: Backend.all)
    func totpEnrollment(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "totp@example.com")
            let begin = try user.call("POST", "/v1/mfa/enrollments", ["kind": "totp"])
            #expect(begin.status == 202)
            let secret = try #require(try begin.decode(EnrollmentStarted.self).secret)
            #expect(Base32.decode(secret)?.count == 20)
            #expect(
                try begin.decode(EnrollmentStarted.self).otpauthURI
                    == "otpauth://totp/Trifactor:totp@example.com?secret=\(secret)&issuer=Trifactor&algorithm=SHA1&digits=6&period=30"
            )
            #expect(try begin.decode(EnrollmentStarted.self).qrSVG?.hasPrefix("<svg") == true)
            let session = try begin.decode(EnrollmentStarted.self).enrollmentSession
            #expect(
                try user.call("POST", "/v1/mfa/enrollments/\(session)", ["code": "000000"]).status == 400
                    || user.totp(secret) == "000000")
            let done = try user.call(
                "POST", "/v1/mfa/enrollments/\(session)", ["code": user.totp(secret), "display_name": "Pixel"])
            #expect(done.status == 201)
            let factor = try done.decode(EnrolledFactor.self)
            #expect(factor.kind == "totp" && factor.displayName == "Pixel")
            let enrolledID = try done.decode(EnrolledFactor.self).enrollmentID
            try user.stepUp((enrolledID, secret))
            #expect(try user.call("POST", "/v1/mfa/enrollments/\(session)", ["code": user.totp(secret)]).status == 404)
            let sealed = try server.database.transaction {
                try $0.queryOne("SELECT secret_sealed FROM mfa_factors")!.text("secret_sealed")
            }
            #expect(!sealed.contains(secret))
            let listed = try user.call("GET", "/v1/mfa/enrollments").decode(EnrolledFactors.self).enrollments
            #expect(listed.map(\.kind) == ["totp"])
        }
    }

    @Test(
        "with a second factor, the password alone yields a pending credential and hints, never a session",
        arguments: Backend.all, Transport.allCases)
    func pendingCredential(backend: Backend, transport: Transport) throws {
        try backend.withServer(transport: transport) { server throws in
            let user = try MFAClient(server, email: "pend@example.com")
            let totp = try user.enrollTOTP()
            let sessionsBefore = try server.database.transaction {
                try $0.queryOne("SELECT COUNT(*) AS n FROM sessions")!.int("n")
            }
            let first = try user.passwordSignIn()
            #expect(first.status == 200)
            let required = try first.decode(MFARequired.self)
            #expect(try required.mfaRequired && first.wireObject()["token"] == nil)
            let hints = required.hints
            #expect(hints.map(\.kind) == ["totp"])
            #expect(hints.first?.enrollmentID == totp.id)
            #expect(
                try server.database.transaction { try $0.queryOne("SELECT COUNT(*) AS n FROM sessions")!.int("n") }
                    == sessionsBefore)
            let pending = try first.decode(MFARequired.self).pendingCredential
            #expect(
                try server.json(
                    "POST", "/v1/mfa/sign-in/challenges", ["pending_credential": pending, "enrollment_id": totp.id]
                ).status == 202)
            // The enrollment used the current step: the next one signs in.
            let done = try server.json(
                "POST", "/v1/sessions/mfa",
                ["pending_credential": pending, "enrollment_id": totp.id, "code": user.totp(totp.secret, offset: 1)])
            #expect(done.status == 201)
            let session = try done.decode(SessionCreated.self).session
            #expect(session.aal == 2 && session.methods == ["pwd", "otp"])
            // Single use.
            let again = try server.json(
                "POST", "/v1/sessions/mfa",
                ["pending_credential": pending, "enrollment_id": totp.id, "code": user.totp(totp.secret, offset: 1)])
            #expect(try again.status == 401 && again.problem.code == "invalid_pending_credential")
            let token = try done.decode(SessionCreated.self).token
            #expect(try server.get("/v1/session", token: token).decode(CurrentSession.self).session.aal == 2)
        }
    }

    @Test("a phone factor: enrollment and sign-in by SMS code, masked hints", arguments: Backend.all)
    func phone(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "phone@example.com")
            let begin = try user.call(
                "POST", "/v1/mfa/enrollments", ["kind": "phone", "phone": "(415) 555-0100", "country": "US"])
            #expect(begin.status == 202)
            #expect(try begin.decode(EnrollmentStarted.self).maskedPhone == "+*******0100")
            let session = try begin.decode(EnrollmentStarted.self).enrollmentSession
            let code = try #require(try user.lastSMSCode("14155550100"))
            let enrolled = try user.call("POST", "/v1/mfa/enrollments/\(session)", ["code": code])
            #expect(enrolled.status == 201)
            let phoneID = try enrolled.decode(EnrolledFactor.self).enrollmentID
            #expect(try user.call("POST", "/v1/session/step-up", ["enrollment_id": phoneID]).status == 202)
            #expect(
                try user.call(
                    "POST", "/v1/session/step-up",
                    ["enrollment_id": phoneID, "code": try #require(try user.lastSMSCode("14155550100"))]
                ).status == 200)
            #expect(
                try user.call("POST", "/v1/mfa/enrollments", ["kind": "phone", "phone": "+14155550100"]).problem.code
                    == "second_factor_exists")

            let first = try user.passwordSignIn()
            let hint = try #require(try first.decode(MFARequired.self).hints.first)
            #expect(hint.maskedPhone == "+*******0100")
            let pending = try first.decode(MFARequired.self).pendingCredential
            let id = hint.enrollmentID
            #expect(
                try server.json(
                    "POST", "/v1/mfa/sign-in/challenges", ["pending_credential": pending, "enrollment_id": id]
                ).status == 202)
            #expect(try user.lastSMS("14155550100")?.contains("your verification code is") == true)
            let signInCode = try #require(try user.lastSMSCode("14155550100"))
            let done = try server.json(
                "POST", "/v1/sessions/mfa", ["pending_credential": pending, "enrollment_id": id, "code": signInCode])
            #expect(done.status == 201)
            #expect(try done.decode(SessionCreated.self).session.methods == ["pwd", "sms"])
        }
    }

    @Test(
        "enrolling a phone again replaces its code (no old code read out later); another user's enrollment of the number keeps its own",
        arguments: Backend.all)
    func phoneEnrolledAgain(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "again@example.com")
            let other = try MFAClient(server, email: "shared@example.com")
            func begin(_ client: MFAClient) throws -> String {
                let begun = try client.call("POST", "/v1/mfa/enrollments", ["kind": "phone", "phone": "+447400123499"])
                #expect(begun.status == 202, "\(begun.text)")
                return try begun.decode(EnrollmentStarted.self).enrollmentSession
            }
            let theirs = try begin(other)
            let theirCode = try #require(try other.lastSMSCode("447400123499"))
            server.clock.advance(1)
            let first = try begin(user)
            let firstCode = try #require(try user.lastSMSCode("447400123499"))
            server.clock.advance(30)
            let second = try begin(user)
            let secondCode = try #require(try user.lastSMSCode("447400123499"))
            if firstCode != secondCode {
                #expect(
                    try user.call("POST", "/v1/mfa/enrollments/\(first)", ["code": firstCode]).status != 201,
                    "the first code was replaced")
            }
            #expect(try user.call("POST", "/v1/mfa/enrollments/\(second)", ["code": secondCode]).status == 201)
            #expect(try other.call("POST", "/v1/mfa/enrollments/\(theirs)", ["code": theirCode]).status == 201)
        }
    }

    @Test(
        "a test number's fixed code never passes a second factor: an enrolled phone gets real codes",
        arguments: Backend.all)
    func testNumberIsNoFactor(backend: Backend) throws {
        try backend.withServer(TestServer.configuration { $0.verify.testNumbers = ["447400123465": "4242"] }) {
            server throws in
            let user = try MFAClient(server, email: "test-number@example.com")
            let phone = try user.enrollPhone("+447400123465")  // by the code texted to it, not by 4242
            let pending = try user.passwordSignIn().decode(MFARequired.self).pendingCredential
            #expect(
                try server.json(
                    "POST", "/v1/mfa/sign-in/challenges", ["pending_credential": pending, "enrollment_id": phone]
                ).status == 202)
            let code = try #require(try user.lastSMSCode("447400123465"))
            let fixed = try server.json(
                "POST", "/v1/sessions/mfa",
                ["pending_credential": pending, "enrollment_id": phone, "code": code == "4242" ? "4243" : "4242"])
            // Refused whatever it is: a factor's code is 6 digits, and the fixed one is no code of this factor.
            #expect(fixed.status == 422)
            #expect(
                try server.json(
                    "POST", "/v1/sessions/mfa", ["pending_credential": pending, "enrollment_id": phone, "code": code]
                ).status == 201)
        }
    }

    @Test("enrolling needs a verified email, a fresh proof, and stays within ten factors; a fixed line is refused")
    func enrollmentRules() throws {
        try Backend.all[0].withServer { server throws in
            let unverified = try MFAClient(server, email: "unv@example.com", verify: false)
            #expect(
                try unverified.call("POST", "/v1/mfa/enrollments", ["kind": "totp"]).problem.code == "unverified_email")
            let user = try MFAClient(server, email: "rules@example.com")
            #expect(
                try user.call("POST", "/v1/mfa/enrollments", ["kind": "phone", "phone": "+441212345678"]).status == 422)
            #expect(try user.call("POST", "/v1/mfa/enrollments", ["kind": "fingerprint"]).status == 422)
            let first = try user.enrollTOTP(name: "app 0")
            // With a factor, the next one needs a fresh second-factor proof, not just the password.
            #expect(
                try user.call("POST", "/v1/mfa/enrollments", ["kind": "totp"]).problem.code == "second_factor_required")
            for i in 1..<10 {
                try user.stepUp(first)
                _ = try user.enrollTOTP(name: "app \(i)")
            }
            try user.stepUp(first)
            #expect(
                try user.call("POST", "/v1/mfa/enrollments", ["kind": "totp"]).problem.code
                    == "second_factor_limit_exceeded")
            let fresh = try MFAClient(server, email: "stale@example.com")
            server.clock.advance(301)
            let stale = try fresh.call("POST", "/v1/mfa/enrollments", ["kind": "totp"])
            #expect(try stale.status == 401 && stale.problem.code == "reauthentication_required")
        }
    }

    @Test("factor names are checked before anything is spent: too long or with control characters is a 422")
    func names() throws {
        try Backend.all[0].withServer { server throws in
            let user = try MFAClient(server, email: "names@example.com")
            let long = String(repeating: "x", count: 65)
            #expect(
                try user.call("POST", "/v1/mfa/enrollments", ["kind": "passkey", "device_name": long]).status == 422)
            #expect(
                try user.call(
                    "POST", "/v1/mfa/enrollments",
                    ["kind": "device", "public_key": try DeviceKey().publicKey, "device_name": "a\u{7}b"]
                ).status == 422)
            let begin = try user.call("POST", "/v1/mfa/enrollments", ["kind": "totp"])
            let session = try begin.decode(EnrollmentStarted.self).enrollmentSession
            let secret = try #require(try begin.decode(EnrollmentStarted.self).secret)
            for _ in 0..<6 {
                #expect(
                    try user.call(
                        "POST", "/v1/mfa/enrollments/\(session)", ["code": user.totp(secret), "display_name": long]
                    ).status == 422)
            }
            // Six refused names spent none of the five attempts.
            #expect(
                try user.call(
                    "POST", "/v1/mfa/enrollments/\(session)", ["code": user.totp(secret), "display_name": "Phone"]
                ).status == 201)
        }
    }

    @Test("enrolling the first factor ends the user's other password-only sessions")
    func firstFactorEndsOtherSessions() throws {
        try Backend.all[0].withServer { server throws in
            let user = try MFAClient(server, email: "thief@example.com")
            let elsewhere = try user.passwordSignIn().decode(SessionCreated.self).token
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
            let pending = try alice.passwordSignIn().decode(MFARequired.self).pendingCredential
            let other = try server.json(
                "POST", "/v1/sessions/mfa",
                [
                    "pending_credential": pending, "enrollment_id": bobTOTP.id,
                    "code": bob.totp(bobTOTP.secret, offset: 1),
                ])
            #expect(other.status == 404)
            server.clock.advance(301)
            let late = try server.json(
                "POST", "/v1/sessions/mfa",
                ["pending_credential": pending, "enrollment_id": aliceTOTP.id, "code": alice.totp(aliceTOTP.secret)])
            #expect(try late.status == 401 && late.problem.code == "invalid_pending_credential")
            #expect(
                try server.json(
                    "POST", "/v1/sessions/mfa",
                    ["pending_credential": "junk", "enrollment_id": aliceTOTP.id, "code": "123456"]
                ).status == 401)
        }
    }

    @Test(
        "five wrong codes end a sign-in; ten in a row, across sign-ins, lock the account's second step, the right code included; time and a success reset it",
        arguments: Backend.all)
    func lockout(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "lock@example.com")
            let totp = try user.enrollTOTP()
            func attempt(_ pending: String, _ code: String) throws -> HTTPTestClient.Response {
                try server.json(
                    "POST", "/v1/sessions/mfa", ["pending_credential": pending, "enrollment_id": totp.id, "code": code])
            }
            let right = user.totp(totp.secret, offset: 1)
            let wrong = right == "000000" ? "111111" : "000000"
            // The sign-in's own budget: the tries left count down, the fifth ends it, and then even the right code cannot save it.
            let first = try user.passwordSignIn().decode(MFARequired.self).pendingCredential
            #expect(try (0..<4).map { _ in try attempt(first, wrong).problem.remainingAttempts } == [4, 3, 2, 1])
            let ended = try attempt(first, wrong)
            #expect(ended.status == 403)
            #expect(try ended.problem.code == "attempts_exhausted")
            #expect(try attempt(first, right).problem.code == "invalid_pending_credential")
            // A code of the wrong shape says so and costs nothing.
            let second = try user.passwordSignIn().decode(MFARequired.self).pendingCredential
            for _ in 0..<6 { #expect(try attempt(second, "12ab").status == 422) }
            // The account's ceiling across sign-ins: the ninth in a row leaves one, the tenth locks.
            #expect(try (0..<4).map { _ in try attempt(second, wrong).problem.remainingAttempts } == [4, 3, 2, 1])
            #expect(try attempt(second, wrong).problem.code == "attempts_exhausted")
            let third = try user.passwordSignIn().decode(MFARequired.self).pendingCredential
            let locked = try attempt(third, right)
            #expect(try locked.status == 429 && locked.problem.code == "too_many_attempts")
            server.clock.advance(6)
            #expect(try attempt(third, right).status == 201)
            #expect(try server.auditKinds().contains("mfa.locked"))
            #expect(try server.auditKinds().contains("mfa.exhausted"))
        }
    }

    @Test(
        "a code typed in groups, with a dash, in full-width digits or pasted with a newline is the code",
        arguments: ["%@ %@", "%@-%@", "wide", "%@%@\n"])
    func typedCodes(form: String) throws {
        try Backend.all[0].withServer { server throws in
            let user = try MFAClient(server, email: "typist@example.com")
            let totp = try user.enrollTOTP()
            let code = user.totp(totp.secret, offset: 1)
            let (head, tail) = (String(code.prefix(3)), String(code.suffix(3)))
            let typed =
                form == "wide"
                ? String(String.UnicodeScalarView(code.unicodeScalars.map { UnicodeScalar($0.value - 0x30 + 0xFF10)! }))
                : String(format: form, head, tail)
            let pending = try user.passwordSignIn().decode(MFARequired.self).pendingCredential
            #expect(
                try server.json(
                    "POST", "/v1/sessions/mfa",
                    ["pending_credential": pending, "enrollment_id": totp.id, "code": typed]
                ).status == 201)
        }
    }

    @Test(
        "a phone code of the wrong length is refused for its shape and costs no attempt; a device's signature is never taken apart as typed"
    )
    func codeShapes() throws {
        try Backend.all[0].withServer { server throws in
            let user = try MFAClient(server, email: "shapes@example.com")
            let phone = try user.enrollPhone()
            let pending = try user.passwordSignIn().decode(MFARequired.self).pendingCredential
            _ = try server.json(
                "POST", "/v1/mfa/sign-in/challenges", ["pending_credential": pending, "enrollment_id": phone])
            let code = try #require(try user.lastSMSCode("+447400123456"))
            for shape in [String(code.prefix(5)), code + "1", "12345a"] {
                let answer = try server.json(
                    "POST", "/v1/sessions/mfa", ["pending_credential": pending, "enrollment_id": phone, "code": shape])
                #expect(answer.status == 422, "\(shape)")
                #expect(try answer.problem.invalidParams?.first?.name == "code")
            }
            // Refused shapes leave the code and the sign-in's budget whole.
            #expect(
                try server.json(
                    "POST", "/v1/sessions/mfa", ["pending_credential": pending, "enrollment_id": phone, "code": code]
                ).status == 201)
            let signature = "MEUCIQD-x_" + String(repeating: "a-b_", count: 20)
            #expect(try MFARoutes.code(signature) == signature)
            #expect(try MFARoutes.code(" 123-456 ") == "123456")
        }
    }

    @Test(
        "proofs racing past a sign-in's budget are not checked: the sixth in parallel ends it, even with the right code"
    )
    func budgetBeforeTheCheck() throws {
        try Backend.all[0].withServer { server throws in
            let user = try MFAClient(server, email: "racer@example.com")
            let totp = try user.enrollTOTP()
            let right = user.totp(totp.secret, offset: 1)
            let pending = try user.passwordSignIn().decode(MFARequired.self).pendingCredential
            // Five counted attempts (as five requests in flight would have), none checked yet.
            try server.database.transaction { db in
                for _ in 0..<5 {
                    _ = try PurposeAttempts.count(
                        .signIn(pendingHash: SHA256.hex(pending)), now: server.nowMillis, on: db)
                }
            }
            let late = try server.json(
                "POST", "/v1/sessions/mfa", ["pending_credential": pending, "enrollment_id": totp.id, "code": right])
            #expect(late.status == 403)
            #expect(try late.problem.code == "attempts_exhausted")
            // It ended the sign-in: its pending credential is spent, and the right code no longer helps.
            let after = try server.json(
                "POST", "/v1/sessions/mfa", ["pending_credential": pending, "enrollment_id": totp.id, "code": right])
            #expect(after.status == 401)
            #expect(try after.problem.code == "invalid_pending_credential")
        }
    }
}
