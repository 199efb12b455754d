import Foundation
import HTTP
import Testing
import TrifactorKit

@testable import TrifactorBank

@Suite("A customer signed out of Trifactor elsewhere is signed out of the bank")
struct SignedOutElsewhereTests {
    /// Expects the answer that sends the browser to sign in again, its bank session over.
    static func expectSignedOut(
        _ response: Response, _ bank: BankHarness, _ browser: TestBrowser,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        #expect(response.status == 303 && response.header("Location") == "/?ended=1", sourceLocation: sourceLocation)
        #expect(browser.cookies[SessionCookie.name] == nil, sourceLocation: sourceLocation)
        #expect(bank.app.sessions.counts.all == 0, sourceLocation: sourceLocation)
        let home = await browser.send("GET", "/?ended=1")
        #expect(
            home.status == 200 && home.text.contains("You were signed out, perhaps from another device."),
            sourceLocation: sourceLocation)
    }

    @Test(
        "every signed-in page, once Trifactor says the session ended, lands on the sign-in page with the notice, never a 500",
        arguments: [
            ("GET", "/accounts"), ("GET", "/settings"), ("POST", "/transfer"), ("GET", "/transfer"),
            ("GET", "/confirm"),
        ])
    func endedSessionSignsOut(method: String, path: String) async throws {
        try await BankHarness.run { bank in
            let ann = try bank.customer("ann@example.com")
            let (browser, session) = try await bank.signedIn(ann)
            bank.trifactor.answer { _ in FakeTrifactor.problem(401, "unauthenticated") }
            let response = await browser.send(
                method, path, form: method == "POST" ? ["csrf": session.csrf, "amount": "1"] : nil)
            await Self.expectSignedOut(response, bank, browser)
        }
    }

    @Test(
        "a Trifactor call inside a page that finds the session ended signs out the same way, before the next check is due"
    )
    func endedInsideThePage() async throws {
        try await BankHarness.run(sessionCheckInterval: 3600) { bank in
            let ann = try bank.customer("ann@example.com")
            for (method, path) in [
                ("GET", "/settings"), ("POST", "/settings/totp"), ("POST", "/settings/sessions/revoke-others"),
            ] {
                let (browser, session) = try await bank.signedIn(ann)
                session.trifactorChecked(bank.clock.now)
                bank.trifactor.answer { _ in FakeTrifactor.problem(401, "session_expired") }
                await Self.expectSignedOut(
                    await browser.send(method, path, form: method == "POST" ? ["csrf": session.csrf] : nil), bank,
                    browser)
            }
        }
    }

    @Test("a Trifactor that cannot be reached signs no one out: balances still show, pages that need it say so")
    func outageSignsNoOneOut() async throws {
        try await BankHarness.run { bank in
            let ann = try bank.customer("ann@example.com")
            let (browser, _) = try await bank.signedIn(ann)
            let accounts = await browser.send("GET", "/accounts")
            #expect(accounts.status == 200 && accounts.text.contains("EUR 2,500.00"))
            let settings = await browser.send("GET", "/settings")
            #expect(settings.status == 503 && settings.text.contains("cannot reach its sign-in service"))
            #expect(bank.app.sessions.counts.all == 1 && browser.cookies[SessionCookie.name] != nil)
        }
    }

    @Test("a live session is asked about at most once per check interval")
    func boundedChecks() async throws {
        try await BankHarness.run(sessionCheckInterval: 2) { bank in
            let ann = try bank.customer("ann@example.com")
            let (browser, _) = try await bank.signedIn(ann)
            bank.trifactor.answer { _ in FakeTrifactor.liveSession }
            for _ in 0..<3 { #expect(await browser.send("GET", "/accounts").status == 200) }
            #expect(bank.trifactor.calls("/v1/session") == 1)
            bank.clock.advance(2)
            #expect(await browser.send("GET", "/accounts").status == 200)
            #expect(bank.trifactor.calls("/v1/session") == 2)
            // Signing out here is not "signed out elsewhere".
            let csrf = try #require(await browser.send("GET", "/accounts").csrf)
            #expect(await browser.send("POST", "/signout", form: ["csrf": csrf]).header("Location") == "/?signed_out=1")
        }
    }
}
