import API
import Core
import Foundation
import ServerTestSupport
import Store
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

@Suite("Recovery codes, step-up, sessions and bound actions")
struct StepUpTests {
    @Test(
        "recovery codes need another factor, are shown once, each works once, tell the user, and a new set voids the old",
        arguments: Backend.all)
    func recoveryCodes(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "rec@example.com")
            #expect(try user.call("POST", "/v1/mfa/recovery-codes").problem.code == "second_factor_needed")
            let totp = try user.enrollTOTP()
            #expect(try user.call("POST", "/v1/mfa/recovery-codes").problem.code == "second_factor_required")
            try user.stepUp(totp)
            let created = try user.call("POST", "/v1/mfa/recovery-codes")
            #expect(created.status == 201)
            let codes = try created.decode(RecoveryCodes.self).codes
            #expect(codes.count == 10 && Set(codes).count == 10)
            #expect(
                codes.allSatisfy {
                    $0.range(of: #"^[2-9A-HJKMNP-Z]{5}-[2-9A-HJKMNP-Z]{5}$"#, options: .regularExpression) != nil
                })
            func signIn(_ code: String) throws -> Int {
                let first = try user.passwordSignIn()
                let required = try first.decode(MFARequired.self)
                let hint = try #require(required.hints.first { $0.kind == "recovery_code" })
                return try server.json(
                    "POST", "/v1/sessions/mfa",
                    [
                        "pending_credential": required.pendingCredential,
                        "enrollment_id": hint.enrollmentID, "code": code,
                    ]
                ).status
            }
            #expect(try signIn(codes[0].lowercased()) == 201)
            #expect(try signIn(codes[0]) == 400)
            // The list says how many are left.
            let listed = try user.call("GET", "/v1/mfa/enrollments").decode(EnrolledFactors.self).enrollments
            #expect(listed.first { $0.kind == "recovery_code" }?.codesLeft == 9)
            #expect(listed.first { $0.kind == "totp" }?.codesLeft == nil)
            #expect(try server.lastMessage(to: "rec@example.com")?.contains("recovery code was just used") == true)
            #expect(try server.auditKinds().contains("recovery_code.used"))
            try user.stepUp(totp)
            let fresh = try user.call("POST", "/v1/mfa/recovery-codes").decode(RecoveryCodes.self).codes
            #expect(try signIn(codes[1]) == 400)
            #expect(try signIn(fresh[0]) == 201)
        }
    }

    @Test(
        "step-up proves a factor on a live session: AAL2, the method added; removing a factor needs that fresh proof",
        arguments: Backend.all)
    func stepUpAndRemove(backend: Backend) throws {
        try backend.withServer { server throws in
            var user = try MFAClient(server, email: "step@example.com")
            let totp = try user.enrollTOTP()
            #expect(try user.call("DELETE", "/v1/mfa/enrollments/\(totp.id)").problem.code == "second_factor_required")
            #expect(try user.call("POST", "/v1/session/step-up", ["enrollment_id": totp.id]).status == 202)
            // Five digits cannot be an app's code: said so, at no cost; a wrong six-digit one is counted.
            #expect(
                try user.call("POST", "/v1/session/step-up", ["enrollment_id": totp.id, "code": "12345"]).status == 422)
            let right = user.totp(totp.secret, offset: 1)
            let wrong = try user.call(
                "POST", "/v1/session/step-up",
                ["enrollment_id": totp.id, "code": right == "000000" ? "111111" : "000000"])
            #expect(wrong.status == 400)
            let up = try user.call(
                "POST", "/v1/session/step-up", ["enrollment_id": totp.id, "code": user.totp(totp.secret, offset: 1)])
            #expect(up.status == 200)
            let session = try up.decode(CurrentSession.self).session
            #expect(session.aal == 2 && session.methods == ["pwd", "otp"])
            #expect(try user.call("DELETE", "/v1/mfa/enrollments/\(totp.id)").status == 204)
            #expect(try user.passwordSignIn().status == 201)  // no factor left: the password is enough again
            server.clock.advance(301)
            user.token = try user.passwordSignIn().decode(SessionCreated.self).token
            #expect(try user.call("DELETE", "/v1/mfa/enrollments/\(totp.id)").status == 401)
        }
    }

    @Test("the user lists their sessions and revokes one")
    func sessions() throws {
        try Backend.all[0].withServer { server throws in
            let user = try MFAClient(server, email: "list@example.com")
            let other = try user.passwordSignIn().decode(SessionCreated.self).token
            let listed = try user.call("GET", "/v1/sessions").decode(SessionList.self).sessions
            #expect(listed.count == 2)
            #expect(listed.filter(\.current).count == 1)
            #expect(listed.allSatisfy { $0.ip == "127.0.0.1" && $0.userAgent == "trifactor-tests" })
            let otherID = try #require(listed.first { !$0.current }?.id)
            #expect(try user.call("DELETE", "/v1/sessions/\(otherID)").status == 204)
            #expect(try server.get("/v1/session", token: other).status == 401)
            #expect(try user.call("DELETE", "/v1/sessions/\(otherID)").status == 404)
            let stranger = try MFAClient(server, email: "stranger@example.com")
            let mine = try #require(try user.call("GET", "/v1/sessions").decode(SessionList.self).sessions.first?.id)
            #expect(try stranger.call("DELETE", "/v1/sessions/\(mine)").status == 404)
        }
    }

    @Test(
        "a bound action: the SMS states it, its code approves it once, and any changed field voids it",
        arguments: Backend.all)
    func boundAction(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "pay@example.com")
            let phone = try user.enrollPhone("+447400123456")
            let action: [String: Any] = [
                "type": "transfer", "amount": "250.00", "currency": "EUR", "payee": "Alice Example", "source": "ACC-1",
            ]
            let created = try user.call("POST", "/v1/authorizations", ["action": action, "enrollment_id": phone])
            #expect(created.status == 202)
            #expect(
                try created.decode(AuthorizationCreated.self).summary
                    == "Confirm transfer of EUR 250.00 to Alice Example")
            let id = try created.decode(AuthorizationCreated.self).authorizationID
            let sms = try #require(try user.lastSMS("447400123456"))
            #expect(sms.contains("to confirm the transfer of €250.00 to Alice Example, your code is "))
            let code = try #require(try user.lastSMSCode("447400123456"))
            let approved = try user.call("POST", "/v1/authorizations/\(id)", ["code": code])
            #expect(try approved.status == 200 && approved.decode(AuthorizationStatus.self).status == "approved")
            #expect(try user.call("POST", "/v1/authorizations/\(id)", ["code": code]).status == 404)

            let userID = try server.database.transaction {
                try AccountRepository.find(email: "pay@example.com", on: $0)!.id
            }
            func consume(_ changes: [String: JSONScalar]) throws -> AuthorizationService.Consumption {
                var a: [String: JSONScalar] = [
                    "type": .string("transfer"), "amount": .string("250.00"), "currency": .string("EUR"),
                    "payee": .string("Alice Example"), "source": .string("ACC-1"),
                ]
                a.merge(changes) { $1 }
                return try server.database.transaction {
                    try AuthorizationService.consume(
                        AuthorizationID(id), userID: userID, action: a, now: server.nowMillis, on: $0)
                }
            }
            #expect(try consume(["amount": .string("2500.00")]) == .mismatch)
            // The tampered attempt voided it: even the exact action is refused now.
            #expect(try consume([:]) == .notFound)
            #expect(try consume(["payee": .string("Mallory")]) == .notFound)
        }
    }

    @Test("an approved action is consumed once with the exact action, and an authorization expires after 5 minutes")
    func consumeOnceAndExpiry() throws {
        try Backend.all[0].withServer { server throws in
            let user = try MFAClient(server, email: "once@example.com")
            let totp = try user.enrollTOTP()
            let action: [String: Any] = ["type": "transfer", "amount": "10.00", "currency": "EUR", "payee": "Bob"]
            let id = try user.call("POST", "/v1/authorizations", ["action": action, "enrollment_id": totp.id]).decode(
                AuthorizationCreated.self
            ).authorizationID
            #expect(
                try user.call("POST", "/v1/authorizations/\(id)", ["code": user.totp(totp.secret, offset: 1)]).status
                    == 200)
            let userID = try server.database.transaction {
                try AccountRepository.find(email: "once@example.com", on: $0)!.id
            }
            let exact: [String: JSONScalar] = [
                "type": .string("transfer"), "amount": .string("10.00"), "currency": .string("EUR"),
                "payee": .string("Bob"),
            ]
            #expect(
                try server.database.transaction {
                    try AuthorizationService.consume(
                        AuthorizationID(id), userID: userID, action: exact, now: server.nowMillis, on: $0)
                } == .used)
            #expect(
                try server.database.transaction {
                    try AuthorizationService.consume(
                        AuthorizationID(id), userID: userID, action: exact, now: server.nowMillis, on: $0)
                } == .notFound)
            let late = try user.call("POST", "/v1/authorizations", ["action": action, "enrollment_id": totp.id]).decode(
                AuthorizationCreated.self
            ).authorizationID
            server.clock.advance(301)
            #expect(try user.call("POST", "/v1/authorizations/\(late)", ["code": user.totp(totp.secret)]).status == 404)
            #expect(
                try user.call("POST", "/v1/authorizations", ["action": ["amount": "1"], "enrollment_id": totp.id])
                    .status == 422)
            #expect(
                try user.call(
                    "POST", "/v1/authorizations",
                    ["action": ["type": "transfer", "Payee": "x"], "enrollment_id": totp.id]
                ).status == 422)
            #expect(
                try user.call(
                    "POST", "/v1/authorizations",
                    ["action": ["type": "transfer", "memo": "a\npayee=b"], "enrollment_id": totp.id]
                ).status == 422)
        }
    }

    @Test(
        "two transfers started in two tabs each get a text whose code approves its own transfer, and three transfers in five minutes all get theirs",
        arguments: Backend.all)
    func transfersInTabs(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "tabs@example.com")
            let phone = try user.enrollPhone("+447400123466")
            func start(_ amount: String) throws -> String {
                let action: [String: Any] = [
                    "type": "transfer", "amount": amount, "currency": "EUR", "payee": "Alice Example",
                    "source": "ACC-1",
                ]
                let created = try user.call("POST", "/v1/authorizations", ["action": action, "enrollment_id": phone])
                #expect(created.status == 202, "\(created.text)")
                return try created.decode(AuthorizationCreated.self).authorizationID
            }
            func code(for amount: String) throws -> String? {
                guard
                    let text = try server.outbox(to: "447400123466").first(where: {
                        $0.channel == "sms" && $0.text.contains("€\(amount)")
                    })?.text,
                    let found = text.range(of: #"\d{6}"#, options: .regularExpression)
                else { return nil }
                return String(text[found])
            }
            // A sign-in texts a code first, as a banking session does.
            let pending = try user.passwordSignIn().decode(MFARequired.self).pendingCredential
            #expect(
                try server.json(
                    "POST", "/v1/mfa/sign-in/challenges", ["pending_credential": pending, "enrollment_id": phone]
                ).status == 202)
            server.clock.advance(30)
            let first = try start("10.00")
            server.clock.advance(20)
            let second = try start("20.00")
            // The first tab's code still approves the first transfer, after the second was started.
            #expect(
                try user.call("POST", "/v1/authorizations/\(first)", ["code": try #require(try code(for: "10.00"))])
                    .status == 200)
            #expect(
                try user.call("POST", "/v1/authorizations/\(second)", ["code": try #require(try code(for: "20.00"))])
                    .status == 200)
            server.clock.advance(60)
            let third = try start("30.00")
            #expect(
                try user.call("POST", "/v1/authorizations/\(third)", ["code": try #require(try code(for: "30.00"))])
                    .status == 200)
        }
    }

    @Test(
        "'Send a new code' for a transfer resends its own authorization's text: the old code dies, the wrong codes still count, another action voids it",
        arguments: Backend.all)
    func resendAuthorization(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "resend@example.com")
            let phone = try user.enrollPhone("+447400123477")
            let action: [String: Any] = [
                "type": "transfer", "amount": "75.00", "currency": "EUR", "payee": "Alice Example", "source": "ACC-1",
            ]
            let created = try user.call("POST", "/v1/authorizations", ["action": action, "enrollment_id": phone])
            let id = try created.decode(AuthorizationCreated.self).authorizationID
            let first = try #require(try user.lastSMSCode("447400123477"))
            let wrong = first == "000000" ? "111111" : "000000"
            for left in [4, 3] {
                #expect(
                    try user.call("POST", "/v1/authorizations/\(id)", ["code": wrong]).problem.remainingAttempts == left
                )
            }
            server.clock.advance(30)
            let resent = try user.call("POST", "/v1/authorizations/\(id)/challenges", ["action": action])
            #expect(resent.status == 202, "\(resent.text)")
            #expect(try resent.decode(AuthorizationCreated.self).authorizationID == id)
            let sms = try #require(try user.lastSMS("447400123477"))
            #expect(sms.contains("€75.00 to Alice Example"))
            let second = try #require(try user.lastSMSCode("447400123477"))
            // The resent text's code replaced the first; the tries left go on from three.
            if second != first {
                #expect(
                    try user.call("POST", "/v1/authorizations/\(id)", ["code": first]).problem.remainingAttempts == 2)
            }
            #expect(try user.call("POST", "/v1/authorizations/\(id)", ["code": second]).status == 200)
            // Nothing to resend once approved.
            #expect(try user.call("POST", "/v1/authorizations/\(id)/challenges", ["action": action]).status == 404)

            // Another action for a pending authorization voids it, and nothing is sent.
            let other = try user.call("POST", "/v1/authorizations", ["action": action, "enrollment_id": phone]).decode(
                AuthorizationCreated.self
            ).authorizationID
            let texts = try server.outbox(to: "447400123477").count
            server.clock.advance(150)
            var tampered = action
            tampered["amount"] = "7500.00"
            let refused = try user.call("POST", "/v1/authorizations/\(other)/challenges", ["action": tampered])
            #expect(try refused.status == 403 && refused.problem.code == "authorization_mismatch")
            #expect(try server.outbox(to: "447400123477").count == texts)
            #expect(try user.call("POST", "/v1/authorizations/\(other)/challenges", ["action": action]).status == 404)
        }
    }

    @Test(
        "a transfer's wrong codes are its own: it starts from five after a failed sign-in, the fifth ends it, and a step-up's fifth ends the session"
    )
    func budgetsPerPurpose() throws {
        try Backend.all[0].withServer { server throws in
            let user = try MFAClient(server, email: "budgets@example.com")
            let totp = try user.enrollTOTP()
            let right = user.totp(totp.secret, offset: 1)
            let wrong = right == "000000" ? "111111" : "000000"
            // Three wrong codes on a sign-in elsewhere leave the transfer's budget whole.
            let pending = try user.passwordSignIn().decode(MFARequired.self).pendingCredential
            for _ in 0..<3 {
                _ = try server.json(
                    "POST", "/v1/sessions/mfa",
                    ["pending_credential": pending, "enrollment_id": totp.id, "code": wrong])
            }
            let action: [String: Any] = ["type": "transfer", "amount": "10.00", "currency": "EUR", "payee": "Bob"]
            let id = try user.call("POST", "/v1/authorizations", ["action": action, "enrollment_id": totp.id]).decode(
                AuthorizationCreated.self
            ).authorizationID
            #expect(try user.call("POST", "/v1/authorizations/\(id)", ["code": wrong]).problem.remainingAttempts == 4)
            for _ in 0..<3 { _ = try user.call("POST", "/v1/authorizations/\(id)", ["code": wrong]) }
            #expect(
                try user.call("POST", "/v1/authorizations/\(id)", ["code": wrong]).problem.code == "attempts_exhausted")
            #expect(
                try user.call("POST", "/v1/authorizations/\(id)", ["code": right]).status == 404, "the transfer ended")
            // A success clears the account's consecutive count: a new sign-in starts from its own five.
            server.clock.advance(60)
            let fresh = try user.passwordSignIn().decode(MFARequired.self).pendingCredential
            #expect(
                try server.json(
                    "POST", "/v1/sessions/mfa",
                    [
                        "pending_credential": fresh, "enrollment_id": totp.id,
                        "code": user.totp(totp.secret),
                    ]
                ).status == 201)
            let again = try user.passwordSignIn().decode(MFARequired.self).pendingCredential
            #expect(
                try server.json(
                    "POST", "/v1/sessions/mfa", ["pending_credential": again, "enrollment_id": totp.id, "code": wrong]
                )
                .problem.remainingAttempts == 4)
            // Coming back: the step-up's fifth wrong code signs the session out.
            for _ in 0..<4 {
                _ = try user.call("POST", "/v1/session/step-up", ["enrollment_id": totp.id, "code": wrong])
            }
            #expect(
                try user.call("POST", "/v1/session/step-up", ["enrollment_id": totp.id, "code": wrong]).problem.code
                    == "attempts_exhausted")
            #expect(try server.get("/v1/session", token: user.token).status == 401)
        }
    }

    @Test("the canonical form of an action is unambiguous: shifted separators and types give other hashes")
    func canonicalForm() {
        let a: [String: JSONScalar] = ["type": .string("x"), "a": .string("1;b"), "b": .string("2")]
        let b: [String: JSONScalar] = ["type": .string("x"), "a": .string("1"), "b": .string(";b2")]
        #expect(AuthorizationService.canonicalHash(a) != AuthorizationService.canonicalHash(b))
        #expect(
            AuthorizationService.canonicalHash(["type": .string("t"), "n": .string("250")])
                != AuthorizationService.canonicalHash(["type": .string("t"), "n": .number(250)]))
        #expect(
            AuthorizationService.canonicalHash(["type": .string("t"), "amount": .string("250.00")])
                == AuthorizationService.canonicalHash(["amount": .string("250.00"), "type": .string("t")]))
    }
}
