import API
import Foundation
import HTTP
import Store
import Synchronization
import Testing
import TrifactorKit

@testable import TrifactorBank

@Suite("Codes that are wrong, used up or replaced never dead-end a customer")
struct CodeFlowTests {
    /// Posts the page's first form fields to `path` and follows the redirects, as the browser does.
    static func submit(_ browser: TestBrowser, _ path: String, _ fields: [String: String], on page: Response)
        async throws -> Response
    {
        let csrf = try #require(page.csrf)
        return await browser.follow("POST", path, form: fields.merging(["csrf": csrf]) { $1 })
    }

    @Test(
        "opening an account: the sixth wrong mobile code (Trifactor ends the enrollment) asks for a new code, which then works; never a 500"
    )
    func openingSurvivesWrongMobileCodes() async throws {
        try await BankHarness.run { bank in
            let enrollments = Mutex(0)
            let attempts = Mutex(0)
            let sitekeys = Shared<[String]>([])
            bank.trifactor.routes { method, path, body in
                switch (method, path) {
                case ("PUT", "/v1/account/sitekey"):
                    // Trifactor owns the sitekey: the opening gives it the customer's choice.
                    let (picture, phrase) = (body["picture"] as? String ?? "", body["phrase"] as? String ?? "")
                    sitekeys.set(sitekeys.current + ["\(picture)/\(phrase)"])
                    return FakeTrifactor.json(SitekeyBody(picture: picture, phrase: phrase))
                case ("POST", "/v1/accounts"): return FakeTrifactor.empty(202)
                case ("POST", "/v1/sessions"): return FakeTrifactor.passwordSession
                case ("GET", "/v1/session"):
                    return FakeTrifactor.json(
                        CurrentSession(
                            session: SessionInfo(
                                id: "s1", aal: 1, methods: ["pwd"], createdAt: Date(), expiresAt: Date() + 3600),
                            user: UserInfo(
                                id: "u1", email: "ann@example.com", displayName: "Ann", emailVerified: false,
                                createdAt: Date())))
                case ("POST", "/v1/accounts/verify-email"): return FakeTrifactor.empty(200)
                case ("POST", "/v1/mfa/enrollments"):
                    let n = enrollments.withLock {
                        $0 += 1
                        return $0
                    }
                    return FakeTrifactor.json(
                        EnrollmentStarted(enrollmentSession: "enrollment-\(n)", maskedPhone: "+*****3456"))
                case ("POST", let p) where p.hasPrefix("/v1/mfa/enrollments/"):
                    if p.hasSuffix("-2"), body["code"] as? String == "123456" {
                        return FakeTrifactor.json(
                            EnrolledFactor(
                                enrollmentID: "f1", kind: "phone", displayName: "Mobile", maskedPhone: "+*****3456",
                                enrolledAt: Date(), lastUsedAt: nil))
                    }
                    let n = attempts.withLock {
                        $0 += 1
                        return $0
                    }
                    return n > 5
                        ? FakeTrifactor.problem(
                            404, "enrollment_not_found", detail: "This enrollment session does not exist.")
                        : FakeTrifactor.problem(400, "invalid_code", detail: "The code is wrong or has expired.")
                default: return nil
                }
            }
            let browser = TestBrowser(bank.server)
            let form = await browser.send("GET", "/open")
            let email = try await Self.submit(
                browser, "/open",
                [
                    "name": "Ann Example", "email": "ann@example.com", "password": "correct horse battery staple",
                    "phone": "+447400123456", "picture": "owl", "phrase": "night watch",
                ], on: form)
            #expect(email.text.contains("Check your email"))
            var page = try await Self.submit(browser, "/open/verify", ["code": "111111"], on: email)
            #expect(page.text.contains("Confirm your mobile") && page.text.contains("+*****3456"))
            #expect(sitekeys.current == ["owl/night watch"])
            // The bank's customer exists once the email is confirmed: an opening left here carries on from a sign-in.
            #expect(
                try bank.database.read {
                    try $0.queryOne("SELECT id FROM bank_customers WHERE email = 'ann@example.com'")
                } != nil)
            for _ in 0..<6 {
                page = try await Self.submit(browser, "/open/phone", ["code": "000000"], on: page)
                #expect(page.status == 200, "a wrong code answered \(page.status)")
            }
            #expect(page.text.contains("send a new code") && page.text.contains("Send a new code"))
            page = try await Self.submit(browser, "/open/phone/resend", [:], on: page)
            #expect(page.text.contains("We sent a new code to +*****3456"))
            page = try await Self.submit(browser, "/open/phone", ["code": "123456"], on: page)
            #expect(page.text.contains("Your accounts") && page.text.contains("Welcome to Trifactor Bank, Ann Example"))
        }
    }

    @Test(
        "five wrong email codes: the page says until when no email code works (a new one included), and sends none before then"
    )
    func emailCodesLocked() async throws {
        try await BankHarness.run { bank in
            bank.trifactor.routes { method, path, _ in
                switch (method, path) {
                case ("POST", "/v1/accounts"), ("POST", "/v1/accounts/verify-email/resend"):
                    return FakeTrifactor.empty(202)
                case ("POST", "/v1/sessions"):
                    return FakeTrifactor.problem(
                        401, "invalid_credentials", detail: "The email or password is incorrect.")
                case ("POST", "/v1/accounts/verify-email"):
                    return FakeTrifactor.problem(400, "invalid_code", detail: "The code is wrong or has expired.")
                default: return nil
                }
            }
            let browser = TestBrowser(bank.server)
            var page = try await Self.submit(
                browser, "/open",
                [
                    "name": "Ann Example", "email": "ann@example.com", "password": "correct horse battery staple",
                    "phone": "+447400123456", "picture": "owl", "phrase": "night watch",
                ], on: await browser.send("GET", "/open"))
            for left in [4, 3, 2, 1] {
                page = try await Self.submit(browser, "/open/verify", ["code": "000000"], on: page)
                #expect(page.text.contains("That code is wrong. \(left) more \(left == 1 ? "try" : "tries")."))
            }
            bank.clock.advance(60)
            page = try await Self.submit(browser, "/open/verify", ["code": "000000"], on: page)
            // The window began when the form was posted: ten minutes later, 17:56 UTC on the test's clock.
            #expect(page.text.contains("no email code works until 17:56 UTC (in 9 minutes). Then send a new code."))
            #expect(!page.text.contains(#"name="code""#))
            page = try await Self.submit(browser, "/open/verify/resend", [:], on: page)
            #expect(
                bank.trifactor.calls("/v1/accounts/verify-email/resend") == 0 && page.text.contains("until 17:56 UTC"))
            bank.clock.advance(9 * 60)
            page = try await Self.submit(browser, "/open/verify/resend", [:], on: page)
            #expect(
                bank.trifactor.calls("/v1/accounts/verify-email/resend") == 1
                    && page.text.contains("We sent a new code to ann@example.com"))
            #expect(page.text.contains(#"name="code""#))
        }
    }

    @Test("coming back: too many wrong codes sign the customer out, with the reason on the sign-in page")
    func comingBackTooManyCodes() async throws {
        try await BankHarness.run { bank in
            let (_, browser, _) = try await bank.ann()
            bank.trifactor.routes { method, path, body in
                switch (method, path) {
                case ("GET", "/v1/mfa/enrollments"): return FakeTrifactor.factors([("phone", "f1", "Mobile")])
                case ("POST", "/v1/session/step-up"):
                    return body["code"] == nil
                        ? FakeTrifactor.json(ChallengeSent())
                        : FakeTrifactor.problem(
                            429, "too_many_attempts", detail: "Too many failed attempts: try again in 20 seconds.",
                            retryAfter: 20)
                case ("DELETE", "/v1/session"): return FakeTrifactor.empty()
                default: return nil
                }
            }
            bank.clock.advance(bank.app.configuration.idleTimeout + 1)
            let away = await browser.follow("GET", "/accounts")
            #expect(away.text.contains("Welcome back") && !away.text.contains("EUR 2,500.00"))
            let code = try await Self.submit(browser, "/confirm/challenge", ["factor": "f1"], on: away)
            #expect(code.text.contains("We sent a code to +*****3456"))
            let out = try await Self.submit(browser, "/confirm/code", ["code": "000000"], on: code)
            #expect(
                out.text.contains(
                    "Too many wrong codes. Please try again in 20 seconds. For your safety you are signed out"))
            #expect(browser.cookies[SessionCookie.name] == nil && bank.app.sessions.counts.all == 0)
            #expect(bank.trifactor.calls("/v1/session") >= 1)
        }
    }

    @Test("coming back offers the customer's passkey first")
    func passkeyFirst() async throws {
        try await BankHarness.run { bank in
            let (_, browser, _) = try await bank.ann()
            bank.trifactor.routes { method, path, _ in
                method == "GET" && path == "/v1/mfa/enrollments"
                    ? FakeTrifactor.factors([("phone", "f1", "Mobile"), ("passkey", "p1", "Laptop")]) : nil
            }
            bank.clock.advance(bank.app.configuration.idleTimeout + 1)
            let page = await browser.follow("GET", "/accounts").text
            let passkey = try #require(page.range(of: "Use my passkey"))
            let text = try #require(page.range(of: "A text message to"))
            #expect(passkey.lowerBound < text.lowerBound && page.contains(#"data-passkey="step-up""#))
        }
    }

    @Test(
        "a transfer confirmed twice (a double click, a second tab) asks Trifactor once, and its code stays the one to type"
    )
    func transferConfirmedTwice() async throws {
        try await BankHarness.run { bank in
            let (ann, browser, session) = try await bank.ann()
            let asked = Shared(0)
            bank.trifactor.routes { method, path, _ in
                switch (method, path) {
                case ("GET", "/v1/mfa/enrollments"): return FakeTrifactor.factors([("phone", "p1", "Mobile")])
                case ("POST", "/v1/authorizations"):
                    asked.set(asked.current + 1)
                    // Trifactor refuses a second text so soon: were it asked again, the first code must survive that.
                    return asked.current == 1
                        ? FakeTrifactor.json(AuthorizationCreated(authorizationID: "a1", summary: "Confirm transfer"))
                        : FakeTrifactor.problem(429, "rate_limited", detail: "Wait.", retryAfter: 60)
                default: return nil
                }
            }
            let accounts = try bank.app.ledger.accounts(of: ann)
            let review = await browser.follow(
                "POST", "/transfer",
                form: ["csrf": session.csrf, "from": accounts[0].id, "to": accounts[1].id, "amount": "5"])
            let id = try #require(review.hidden("transfer"))
            let first = await browser.follow(
                "POST", "/transfer/confirm", form: ["csrf": session.csrf, "transfer": id, "factor": "p1"])
            let second = await browser.follow(
                "POST", "/transfer/confirm", form: ["csrf": session.csrf, "transfer": id, "factor": "p1"])
            #expect(asked.current == 1, "one authorization, one text")
            #expect(first.text.contains(#"name="code""#) && second.text.contains(#"name="code""#))
            #expect(!second.text.contains("cannot send another text"))
            #expect(session.pendingTransfer(id)?.authorizationID == "a1")
        }
    }

    @Test("too many wrong codes end a transfer: nothing moved, the customer is back at the accounts")
    func transferEndsAfterTooManyCodes() async throws {
        try await BankHarness.run { bank in
            let (ann, browser, session) = try await bank.ann()
            bank.trifactor.routes { method, path, _ in
                switch (method, path) {
                case ("GET", "/v1/mfa/enrollments"): return FakeTrifactor.factors([("totp", "t1", "App")])
                case ("POST", "/v1/authorizations"):
                    return FakeTrifactor.json(AuthorizationCreated(authorizationID: "a1", summary: "Confirm transfer"))
                case ("POST", "/v1/authorizations/a1"):
                    return FakeTrifactor.problem(400, "invalid_code", detail: "Wrong.", remaining: 0)
                default: return nil
                }
            }
            let accounts = try bank.app.ledger.accounts(of: ann)
            let review = await browser.follow(
                "POST", "/transfer",
                form: ["csrf": session.csrf, "from": accounts[0].id, "to": accounts[1].id, "amount": "5"])
            let id = try #require(review.hidden("transfer"))
            _ = await browser.follow(
                "POST", "/transfer/confirm", form: ["csrf": session.csrf, "transfer": id, "factor": "t1"])
            let ended = await browser.follow(
                "POST", "/transfer/approve", form: ["csrf": session.csrf, "transfer": id, "code": "000000"])
            #expect(
                ended.text.contains("Your accounts")
                    && ended.text.contains("The transfer was cancelled. Nothing was moved."))
            let after = try bank.app.ledger.accounts(of: ann)
            #expect(session.pendingTransfer(id) == nil && after[0].balance.minorUnits == 250_000)
        }
    }
}
