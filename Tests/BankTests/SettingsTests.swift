import API
import Foundation
import HTTP
import Synchronization
import Testing
import TrifactorKit

@testable import TrifactorBank

@Suite(
    "Settings name what they ask for, carry the change out once confirmed, and ask before two-step verification turns off"
)
struct SettingsTests {
    /// Trifactor for a customer with a phone: step-ups by code "123456", and `fresh` saying whether a change needs one first.
    static func trifactor(
        _ bank: BankHarness, fresh: Shared<Bool>,
        factors: [(kind: FactorKind, id: String, name: String)] = [("phone", "f1", "Mobile")]
    ) {
        let removed = Shared(false)
        bank.trifactor.routes { method, path, body in
            switch (method, path) {
            case ("GET", "/v1/mfa/enrollments"):
                return FakeTrifactor.factors(removed.current ? factors.filter { $0.id != "f1" } : factors)
            case ("GET", "/v1/sessions"): return FakeTrifactor.json(SessionList(sessions: []))
            case ("POST", "/v1/session/step-up"):
                guard let code = body["code"] as? String else { return FakeTrifactor.json(ChallengeSent()) }
                guard code == "123456" else {
                    return FakeTrifactor.problem(400, "invalid_code", detail: "Wrong.", remaining: 9)
                }
                fresh.set(true)
                return FakeTrifactor.liveSession
            case ("POST", "/v1/mfa/enrollments"), ("POST", "/v1/mfa/recovery-codes"),
                ("DELETE", "/v1/mfa/enrollments/f1"):
                guard fresh.current else {
                    return FakeTrifactor.problem(401, "second_factor_required", detail: "Step up.")
                }
                if path.hasSuffix("recovery-codes") {
                    return FakeTrifactor.json(RecoveryCodes(codes: ["AAAAA-BBBBB", "CCCCC-DDDDD"]))
                }
                if method == "DELETE" {
                    removed.set(true)
                    return FakeTrifactor.empty()
                }
                return FakeTrifactor.json(
                    EnrollmentStarted(
                        enrollmentSession: "e1", secret: "JBSWY3DPEHPK3PXP",
                        otpauthURI: "otpauth://totp/Trifactor:ann?secret=JBSWY3DPEHPK3PXP", qrSVG: "<svg/>"))
            default: return nil
            }
        }
    }

    @Test(
        "adding an authenticator app asks 'Confirm it's you to add an authenticator app', then shows the app's QR code, secret in fours and link"
    )
    func stepUpNamesAndReturns() async throws {
        try await BankHarness.run { bank in
            let (ann, browser, session) = try await bank.ann()
            let fresh = Shared(false)
            Self.trifactor(bank, fresh: fresh)
            let asked = await browser.follow("POST", "/settings/totp", form: ["csrf": session.csrf])
            #expect(
                asked.text.contains(
                    "<h1 id=\"title\" tabindex=\"-1\">Confirm it&#39;s you to add an authenticator app</h1>"))
            let code = await browser.follow("POST", "/confirm/challenge", form: ["csrf": session.csrf, "factor": "f1"])
            #expect(code.text.contains("Confirm it&#39;s you to add an authenticator app"))
            let app = await browser.follow("POST", "/confirm/code", form: ["csrf": session.csrf, "code": "123456"])
            #expect(app.text.contains("Add an authenticator app") && app.text.contains("JBSW Y3DP EHPK 3PXP"))
            #expect(app.text.contains(#"href="otpauth://totp/Trifactor:ann?secret=JBSWY3DPEHPK3PXP""#))
            #expect(bank.trifactor.calls("/v1/mfa/enrollments") >= 2)
        }
    }

    @Test(
        "removing the only second factor asks first, saying two-step verification turns off; once removed, balances hide"
    )
    func removingTheLastFactor() async throws {
        try await BankHarness.run { bank in
            let (ann, browser, session) = try await bank.ann()
            let fresh = Shared(true)
            Self.trifactor(bank, fresh: fresh)
            let ask = await browser.send("GET", "/settings/factors/f1/remove")
            #expect(ask.text.contains("Remove Mobile?") && ask.text.contains("Two-step verification turns off."))
            #expect(
                ask.text.contains("Remove Mobile and turn off two-step verification") && ask.text.contains("Keep it"))
            let removed = await browser.follow(
                "POST", "/settings/factors/remove", form: ["csrf": session.csrf, "factor": "f1", "name": "Mobile"])
            #expect(
                removed.text.contains("Removed Mobile. Two-step verification is off")
                    && removed.text.contains("Add two-step verification"))
            #expect(!removed.text.contains("EUR 2,500.00"))
        }
    }

    @Test("removing one of two second factors asks without the warning")
    func removingOneOfTwo() async throws {
        try await BankHarness.run { bank in
            let (_, browser, _) = try await bank.ann()
            Self.trifactor(
                bank, fresh: Shared(true), factors: [("phone", "f1", "Mobile"), ("totp", "t1", "Authenticator app")])
            let ask = await browser.send("GET", "/settings/factors/f1/remove")
            #expect(ask.text.contains("Remove Mobile?") && !ask.text.contains("turns off"))
        }
    }

    @Test(
        "recovery codes are downloaded as a text file from the session's memory, and gone once the customer has saved them"
    )
    func recoveryCodes() async throws {
        try await BankHarness.run { bank in
            let (ann, browser, session) = try await bank.ann()
            Self.trifactor(bank, fresh: Shared(true))
            let page = await browser.follow("POST", "/settings/recovery", form: ["csrf": session.csrf])
            #expect(
                page.text.contains("AAAAA-BBBBB") && page.text.contains(#"data-copy="codes""#)
                    && page.text.contains("data-print"))
            let file = await browser.send("GET", "/settings/recovery/codes.txt")
            #expect(file.status == 200 && file.header("Content-Type") == "text/plain; charset=utf-8")
            #expect(
                file.header("Content-Disposition")?.hasPrefix("attachment") == true
                    && file.text.contains("AAAAA-BBBBB\nCCCCC-DDDDD\n"))
            #expect(bank.trifactor.calls("/v1/mfa/recovery-codes") == 1)
            _ = await browser.follow("POST", "/settings/recovery/done", form: ["csrf": session.csrf])
            #expect(await browser.send("GET", "/settings/recovery/codes.txt").status == 303)
        }
    }

    @Test("a passkey Trifactor refuses is said to be refused, never 'the email or password is incorrect'")
    func refusedPasskey() async throws {
        try await BankHarness.run { bank in
            bank.trifactor.routes { method, path, _ in
                method == "POST" && path == "/v1/sessions/passkey"
                    ? FakeTrifactor.problem(401, "invalid_credentials", detail: "The email or password is incorrect.")
                    : nil
            }
            let browser = TestBrowser(bank.server)
            let csrf = try #require(await browser.send("GET", "/").csrf)
            _ = await browser.send("POST", "/signin/passkeyless/options", json: csrf)
            let refused = await browser.send(
                "POST", "/signin/passkeyless", json: csrf,
                body:
                    #"{"assertion":{"id":"x","rawId":"eA","type":"public-key","response":{"clientDataJSON":"e30","authenticatorData":"AA","signature":"AA"}}}"#
            )
            #expect(
                refused.status == 401 && refused.text.contains("That passkey was not accepted")
                    && !refused.text.contains("email or password"))
        }
    }
}
