import Foundation
import HTTP
import Testing
import WebUI

@testable import TrifactorBank

@Suite("No dead ends: every step is a page, every form redirects, a step out of turn goes to where the customer is")
struct StepTests {
    static let steps = [
        "/signin/password", "/signin/factor", "/signin/code", "/signin/push", "/signin/device", "/open/verify",
        "/open/phone",
        "/setup/phone/code", "/confirm", "/confirm/code",
    ]

    @Test(
        "a step opened by its URL without being at it goes to the start for a visitor, to the accounts when signed in",
        arguments: steps)
    func stepOutOfTurn(path: String) async throws {
        try await BankHarness.run { bank in
            let visitor = TestBrowser(bank.server)
            #expect(await visitor.send("GET", path).header("Location") == "/")
            let ann = try bank.customer("ann@example.com")
            let (browser, _) = try await bank.signedIn(ann)
            bank.trifactor.routes { _, _, _ in nil }
            let answer = await browser.send("GET", path)
            #expect(
                answer.status == 303 && answer.header("Location") == "/accounts",
                "\(path) answered \(answer.status) \(answer.header("Location") ?? "")")
        }
    }

    @Test(
        "a customer's page opened while signed out goes to the start page, which says to sign in to see it",
        arguments: ["/accounts", "/transfer", "/settings"])
    func signedOutDeepLink(path: String) async throws {
        try await BankHarness.run { bank in
            let visitor = TestBrowser(bank.server)
            let answer = await visitor.send("GET", path)
            #expect(answer.status == 303 && answer.header("Location") == "/?continue=1")
            #expect(await visitor.send("GET", "/?continue=1").text.contains("Please sign in to see that page."))
        }
    }

    @Test("a form posted from a page that is no longer current does nothing and the page it lands on says so")
    func outOfDateForm() async throws {
        try await BankHarness.run { bank in
            let browser = TestBrowser(bank.server)
            let csrf = try #require(await browser.send("GET", "/").csrf)
            #expect(
                await browser.send("POST", "/signin", form: ["csrf": csrf, "email": "ann@example.com"]).header(
                    "Location") == "/signin/password")
            // Another tab starts again: the first tab's password form is out of date.
            _ = await browser.send("GET", "/")
            let stale = await browser.send(
                "POST", "/signin/password", form: ["csrf": csrf, "password": "whatever it is"])
            #expect(stale.status == 303 && stale.header("Location") == "/")
            #expect(await browser.send("GET", "/").text.contains("That page was out of date"))
            #expect(bank.trifactor.calls("/v1/sessions") == 0)
        }
    }

    @Test("a form refused for another field comes back with its password empty, and says to type it again")
    func passwordRetyped() async throws {
        try await BankHarness.run { bank in
            let visitor = TestBrowser(bank.server)
            let csrf = try #require(await visitor.send("GET", "/open").csrf)
            // A password the form took comes back empty, as it must, and the page says why rather than losing it silently.
            let typed = await visitor.send(
                "POST", "/open",
                form: [
                    "csrf": csrf, "name": "Ann Example", "email": "ann@example.com",
                    "password": "correct horse battery",
                    "phone": "123",
                ])
            #expect(typed.status == 303)
            let retype = await visitor.send("GET", "/open")
            #expect(retype.text.contains("Type it again: for your safety it is never kept."))
            #expect(!retype.text.contains("correct horse battery"))
        }
    }

    @Test(
        "a refused form comes back by a redirect with what was typed and why, for a visitor too (a signed cookie, no session)"
    )
    func refusedFormsRedirect() async throws {
        try await BankHarness.run { bank in
            let visitor = TestBrowser(bank.server)
            let csrf = try #require(await visitor.send("GET", "/open").csrf)
            let refused = await visitor.send(
                "POST", "/open", form: ["csrf": csrf, "name": "Ann Example", "email": "not an email", "phone": "123"])
            #expect(refused.status == 303 && refused.header("Location") == "/open")
            #expect(bank.app.sessions.counts.all == 0)
            let form = await visitor.send("GET", "/open")
            #expect(
                form.text.contains(#"value="Ann Example""#) && form.text.contains("Enter your email address")
                    && form.text.contains("international form"))
            // A refresh shows it again; a minute later it is gone.
            #expect(await visitor.send("GET", "/open").text.contains("Enter your email address"))
            bank.clock.advance(DraftCookie.lifetime)
            #expect(!(await visitor.send("GET", "/open").text.contains("Enter your email address")))
            // A cookie the bank did not sign, or signed for another page, shows nothing.
            visitor.set(cookie: DraftCookie.name, "eyJwYXRoIjoiL29wZW4ifQ.forged")
            #expect(!(await visitor.send("GET", "/open").text.contains("role=\"alert\"")))
            let other = DraftCookie(secret: Array(repeating: 7, count: 32)).setCookie(
                FormDraft(errors: ["email": "Planted."]), for: "/", now: bank.clock.now,
                secure: false)!
            visitor.set(
                cookie: DraftCookie.name, String(other.dropFirst(DraftCookie.name.count + 1).prefix { $0 != ";" }))
            #expect(!(await visitor.send("GET", "/open").text.contains("Planted.")))
        }
    }

    @Test("a path with no page is an HTML 404, a page asked with another method an HTML 405 with Allow")
    func notFoundAndNotAllowed() async throws {
        try await BankHarness.run { bank in
            let browser = TestBrowser(bank.server)
            let missing = await browser.send("GET", "/no/such/page")
            #expect(
                missing.status == 404 && missing.header("Content-Type")?.hasPrefix("text/html") == true
                    && missing.text.contains("There is no such page"))
            let wrongMethod = await browser.send("GET", "/signin")
            #expect(
                wrongMethod.status == 405 && wrongMethod.header("Allow") == "POST" && wrongMethod.text.contains("<h1"))
            let postToPage = await browser.send("POST", "/accounts")
            #expect(postToPage.status == 405 && postToPage.header("Allow") == "GET, HEAD")
        }
    }

    @Test("passkeys are offered at a name, not at an IP address, where WebAuthn cannot work")
    func passkeysNeedAName() async throws {
        for (host, works) in [
            ("localhost:8090", true), ("bank.example", true), ("127.0.0.1:8090", false), ("[::1]:8090", false),
            ("10.1.2.3", false),
        ] {
            #expect(
                BankApp.passkeysWork(Request(id: "r", method: "GET", path: "/", headers: ["host": host])) == works,
                "\(host)")
        }
        try await BankHarness.run { bank in
            let named = bank.server.respond(method: "GET", path: "/", headers: ["Host": "localhost:8090"])
            let numeric = bank.server.respond(method: "GET", path: "/", headers: ["Host": "127.0.0.1:8090"])
            #expect(String(decoding: named.body, as: UTF8.self).contains("Sign in with a passkey"))
            #expect(!String(decoding: numeric.body, as: UTF8.self).contains("passkey"))
        }
    }

    @Test("every page refuses to be cached, so Back shows what the session says now")
    func noStore() async throws {
        try await BankHarness.run { bank in
            #expect(bank.server.respond(method: "GET", path: "/").header("Cache-Control") == "no-store")
        }
    }
}
