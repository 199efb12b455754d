import API
import Foundation
import HTTP
import Testing
import TrifactorKit

@testable import TrifactorBank

@Suite("“Call me instead” of a texted code")
struct CallInsteadTests {
    /// The customer's factors as Trifactor hints them: a mobile and an authenticator app.
    static let hints = [
        MFAHint(enrollmentID: "f1", kind: "phone", displayName: "Mobile", maskedPhone: "+*****3456"),
        MFAHint(enrollmentID: "f2", kind: "totp", displayName: "App", maskedPhone: nil),
    ]

    /// Presses “Call me instead” on `page` three times, Trifactor answering the call with a call, a dead code and a limit;
    /// `call` is what the fake answers the call with.
    static func pressCall(_ browser: TestBrowser, _ path: String, on page: Response, _ call: Shared<HTTPResponse>)
        async throws
    {
        var page = try await CodeFlowTests.submit(browser, path, [:], on: page)
        #expect(page.text.contains("We are calling +*****3456 now: the voice reads out the same code."), "\(page.text)")
        call.set(FakeTrifactor.problem(409, "second_factor_unusable", detail: "Nothing was texted."))
        page = try await CodeFlowTests.submit(browser, path, [:], on: page)
        #expect(page.text.contains("That code has expired, so there is nothing to read out: send a new code."))
        call.set(FakeTrifactor.problem(429, "rate_limited", detail: "Too many messages.", retryAfter: 83))
        page = try await CodeFlowTests.submit(browser, path, [:], on: page)
        #expect(
            page.text.contains("We cannot call you yet.") && page.text.contains("use your authenticator app instead"),
            "\(page.text)")
    }

    @Test(
        "at a sign-in: the call is coming, a dead code has nothing to read out, and a call that cannot be made yet offers the other ways"
    )
    func signIn() async throws {
        try await BankHarness.run { bank in
            let call = Shared(FakeTrifactor.empty(204))
            bank.trifactor.routes { method, path, _ in
                switch (method, path) {
                case ("POST", "/v1/sessions"):
                    return FakeTrifactor.json(MFARequired(pendingCredential: "pending", hints: Self.hints))
                case ("POST", "/v1/mfa/sign-in/challenges"): return FakeTrifactor.json(ChallengeSent())
                case ("POST", "/v1/mfa/sign-in/challenges/call"): return call.current
                default: return nil
                }
            }
            let browser = TestBrowser(bank.server)
            var page = try await CodeFlowTests.submit(
                browser, "/signin", ["email": "ann@example.com", "mode": "password"], on: await browser.send("GET", "/")
            )
            page = try await CodeFlowTests.submit(
                browser, "/signin/password", ["password": "correct horse battery staple"], on: page)
            page = try await CodeFlowTests.submit(browser, "/signin/challenge", ["factor": "f1"], on: page)
            try await Self.pressCall(browser, "/signin/call", on: page, call)
        }
    }

    @Test("at a password reset: the same three answers, on the new-password page")
    func reset() async throws {
        try await BankHarness.run { bank in
            let call = Shared(FakeTrifactor.empty(204))
            let expires = bank.clock.now.addingTimeInterval(600)
            bank.trifactor.routes { method, path, _ in
                switch (method, path) {
                case ("POST", "/v1/accounts/password-reset"): return FakeTrifactor.empty(202)
                case ("POST", "/v1/accounts/password-reset/verify"):
                    return FakeTrifactor.json(
                        PasswordResetVerified(
                            resetCredential: "reset", expiresAt: expires, secondFactorRequired: true, hints: Self.hints)
                    )
                case ("POST", "/v1/accounts/password-reset/challenges"): return FakeTrifactor.json(ChallengeSent())
                case ("POST", "/v1/accounts/password-reset/challenges/call"): return call.current
                default: return nil
                }
            }
            let browser = TestBrowser(bank.server)
            var page = try await CodeFlowTests.submit(
                browser, "/forgot", ["email": "ann@example.com"], on: await browser.send("GET", "/forgot"))
            page = try await CodeFlowTests.submit(browser, "/forgot/code", ["code": "12345678"], on: page)
            page = try await CodeFlowTests.submit(browser, "/forgot/challenge", ["factor": "f1"], on: page)
            try await Self.pressCall(browser, "/forgot/call", on: page, call)
        }
    }
}
