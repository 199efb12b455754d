import Foundation
import HTTP
import Sitekeys
import Store
import Testing

@testable import TrifactorBank

@Suite("The sitekey tells no one who banks here")
struct SitekeyPrivacyTests {
    /// The password page a browser gets for `email`, with the CSRF token and the email blanked out.
    static func passwordPage(_ browser: TestBrowser, _ email: String) async throws -> String {
        let home = await browser.send("GET", "/")
        let csrf = try #require(home.csrf)
        let page = await browser.follow("POST", "/signin", form: ["csrf": csrf, "email": email, "mode": "password"])
        #expect(page.status == 200)
        let token = try #require(page.csrf)
        return page.text.replacingOccurrences(of: token, with: "TOKEN").replacingOccurrences(of: email, with: "EMAIL")
    }

    @Test(
        "the password page for a non-customer and for a customer on a new browser are the same bytes but for the token and the email"
    )
    func newBrowserAndNonCustomerAlike() async throws {
        try await BankHarness.run { bank in
            _ = try bank.customer("ann@example.com", picture: "owl", phrase: "night watch")
            let first = TestBrowser(bank.server)
            let second = TestBrowser(bank.server)
            let customer = try await Self.passwordPage(first, "ann@example.com")
            let stranger = try await Self.passwordPage(second, "nobody-here@example.com")
            #expect(customer == stranger)
            #expect(customer.contains(BankApp.newBrowserSitekey.replacingOccurrences(of: "'", with: "&#39;")))
            #expect(!customer.contains("night watch") && !customer.contains("/sitekeys/"))
        }
    }

    @Test(
        "a browser recognised as a customer's shows their sitekey for their email only; any other email sees the neutral page"
    )
    func recognisedBrowser() async throws {
        try await BankHarness.run { bank in
            let ann = try bank.customer("ann@example.com", picture: "owl", phrase: "night watch")
            _ = try bank.customer("bob@example.com", picture: "sun", phrase: "bright morning")
            let cookie = try bank.app.browsers.remember(customerID: ann, current: nil, now: bank.clock.now)
            let known = TestBrowser(bank.server)
            let fresh = TestBrowser(bank.server)
            known.set(cookie: KnownBrowsers.cookie, cookie)
            let own = try await Self.passwordPage(known, "ann@example.com")
            #expect(own.contains("night watch") && own.contains("/sitekeys/owl.svg"))
            let other = try await Self.passwordPage(known, "bob@example.com")
            let stranger = try await Self.passwordPage(fresh, "bob@example.com")
            #expect(other == stranger)
            // A year later the browser is new again.
            bank.clock.advance(TimeInterval(RecognisedBrowsers.lifetimeSeconds + 1))
            let later = try await Self.passwordPage(known, "ann@example.com")
            #expect(!later.contains("night watch"))
        }
    }

    @Test(
        "a sign-in with a second factor recognises the browser (a year, HttpOnly, SameSite); a password alone does not")
    func rememberedAfterSecondFactor() async throws {
        try await BankHarness.run { bank in
            _ = try bank.customer("ann@example.com")
            let request = Request(id: "r1", method: "POST", path: "/signin/code")
            let alone = try bank.app.finishSignIn(
                BankSession(now: bank.clock.now), email: "ann@example.com", request: request, next: "/setup/phone",
                secondFactor: false)
            #expect(!alone.headers.contains { $0.value.hasPrefix("\(KnownBrowsers.cookie)=") })
            let strong = try bank.app.finishSignIn(
                BankSession(now: bank.clock.now), email: "ann@example.com", request: request, next: "/accounts")
            let set = try #require(strong.headers.first { $0.value.hasPrefix("\(KnownBrowsers.cookie)=") }?.value)
            #expect(set.hasSuffix("; Path=/; Max-Age=31536000; HttpOnly; SameSite=Strict"))
            let value = String(set.dropFirst(KnownBrowsers.cookie.count + 1).prefix(43))
            #expect(try bank.app.browsers.customer(of: value, now: bank.clock.now) != nil)
            // Stored only as its SHA-256.
            let stored = try bank.database.read {
                try $0.query("SELECT id FROM bank_browsers").map { try $0.text("id") }
            }
            #expect(stored.count == 1 && stored[0] != value && stored[0].count == 64)
        }
    }

    @Test(
        "posting the email form is limited per client address: the 21st in a burst gets a 429 page, another address does not"
    )
    func signInRateLimit() async throws {
        try await BankHarness.run { bank in
            let busy = TestBrowser(bank.server, address: "10.0.0.1")
            let csrf = try #require(await busy.send("GET", "/").csrf)
            var statuses: [Int] = []
            for _ in 0..<20 {
                statuses.append(
                    await busy.send("POST", "/signin", form: ["csrf": csrf, "email": "not-an-email"]).status)
            }
            #expect(statuses.allSatisfy { $0 == 303 })  // sent back to the form, saying why
            let limited = await busy.send("POST", "/signin", form: ["csrf": csrf, "email": "ann@example.com"])
            #expect(limited.status == 429 && limited.header("Retry-After") != nil)
            #expect(
                limited.text.contains("too many sign-in attempts")
                    && limited.header("Content-Type")?.hasPrefix("text/html") == true)
            let other = TestBrowser(bank.server, address: "10.0.0.2")
            let token = try #require(await other.send("GET", "/").csrf)
            #expect(
                await other.send("POST", "/signin", form: ["csrf": token, "email": "ann@example.com"]).header(
                    "Location") == "/signin/password")
            bank.clock.advance(6)  // 10 a minute: one more after six seconds
            #expect(
                await busy.send("POST", "/signin", form: ["csrf": csrf, "email": "ann@example.com"]).header("Location")
                    == "/signin/password")
        }
    }

    @Test("IPv6 clients share their /64's sign-in limit: rotating addresses inside it buys nothing")
    func signInRateLimitPerSubnet() async throws {
        try await BankHarness.run { bank in
            var statuses: [Int] = []
            for i in 0..<21 {
                let browser = TestBrowser(bank.server, address: "2001:db8:1:2::\(String(i + 1, radix: 16))")
                let csrf = try #require(await browser.send("GET", "/").csrf)
                statuses.append(
                    await browser.send("POST", "/signin", form: ["csrf": csrf, "email": "not-an-email"]).status)
            }
            #expect(statuses.prefix(20).allSatisfy { $0 == 303 } && statuses.last == 429)
            let neighbour = TestBrowser(bank.server, address: "2001:db8:1:3::1")
            let csrf = try #require(await neighbour.send("GET", "/").csrf)
            #expect(
                await neighbour.send("POST", "/signin", form: ["csrf": csrf, "email": "not-an-email"]).status == 303)
        }
    }
}
