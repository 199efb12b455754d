import API
import Foundation
import ServerTestSupport
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

@Suite("Resending a phone factor's code")
struct PhoneResendTests {
    @Test("a resend the number's rate limit refuses leaves the code already sent valid", arguments: Backend.all)
    func refusedResendKeepsTheCode(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "resend@example.com")
            let phone = try user.enrollPhone()
            let pending = try user.passwordSignIn().decode(MFARequired.self).pendingCredential
            func send() throws -> HTTPTestClient.Response {
                try server.json(
                    "POST", "/v1/mfa/sign-in/challenges", ["pending_credential": pending, "enrollment_id": phone])
            }
            // Resend until the number's limit refuses one; each accepted resend replaces the code before it.
            var answers: [Int] = []
            var code: String?
            while answers.last != 429 && answers.count < 12 {
                server.clock.advance(1)  // a second apart, as a person resends
                let answer = try send()
                answers.append(answer.status)
                if answer.status != 429 { code = try user.lastSMSCode("+447400123456") }
            }
            #expect(answers.last == 429)
            #expect(answers.dropLast().allSatisfy { $0 == 200 || $0 == 202 }, "\(answers)")
            #expect(try user.lastSMSCode("+447400123456") == code, "the refused resend sent nothing")
            let done = try server.json(
                "POST", "/v1/sessions/mfa",
                ["pending_credential": pending, "enrollment_id": phone, "code": try #require(code)])
            let kinds = try server.auditKinds().suffix(14)
            #expect(done.status == 201, "\(answers) \(done.text) \(kinds)")
        }
    }

    @Test(
        "resends in one millisecond: the newest code is the one checked, not one it superseded", arguments: Backend.all)
    func resendsInOneMillisecond(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "burst@example.com")
            let phone = try user.enrollPhone()
            let pending = try user.passwordSignIn().decode(MFARequired.self).pendingCredential
            // Five texts fit the number's burst; the clock does not move, so every challenge has the same time.
            for _ in 0..<4 {
                let sent = try server.json(
                    "POST", "/v1/mfa/sign-in/challenges", ["pending_credential": pending, "enrollment_id": phone])
                #expect(sent.status == 202 || sent.status == 200, "\(sent.text)")
            }
            let code = try #require(try user.lastSMSCode("+447400123456"))
            let done = try server.json(
                "POST", "/v1/sessions/mfa", ["pending_credential": pending, "enrollment_id": phone, "code": code])
            #expect(done.status == 201, "\(done.text)")
        }
    }
}
