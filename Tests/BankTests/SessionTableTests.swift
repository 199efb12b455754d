import Foundation
import HTTP
import Testing

@testable import TrifactorBank

@Suite("Anonymous visitors cost no memory; pre-sign-in sessions are capped and swept")
struct SessionTableTests {
    @Test("60,000 cookieless GET / leave no session in the table")
    func visitorsKeepNoState() async throws {
        try await BankHarness.run { bank in
            for _ in 0..<60_000 {
                let home = bank.server.respond(method: "GET", path: "/")
                guard home.status == 200 else {
                    Issue.record("GET / answered \(home.status)")
                    return
                }
            }
            #expect(bank.app.sessions.counts.all == 0)
        }
    }

    @Test(
        "a visitor's signed token starts a session at the email form, the account opening and the passkey sign-in, keeping the token"
    )
    func visitorsStartSessions() async throws {
        try await BankHarness.run { bank in
            let browser = TestBrowser(bank.server)
            let home = await browser.send("GET", "/")
            #expect(home.header("Set-Cookie")?.hasPrefix("\(VisitorCSRF.cookie)=") == true)
            let csrf = try #require(home.csrf)
            #expect(await browser.send("GET", "/").csrf == csrf)  // the same nonce, the same token: several tabs work
            let started = await browser.follow("POST", "/signin", form: ["csrf": csrf, "email": "ann@example.com"])
            #expect(started.status == 200 && started.csrf == csrf && bank.app.sessions.counts.all == 1)
            #expect(browser.cookies[SessionCookie.name] != nil)

            let opener = TestBrowser(bank.server)
            let form = try #require(await opener.send("GET", "/open").csrf)
            // Refused fields go back to the form in a signed cookie: still no session.
            let refused = await opener.follow("POST", "/open", form: ["csrf": form, "name": ""])
            #expect(refused.status == 200 && refused.text.contains("Enter your name"))
            #expect(bank.app.sessions.counts.all == 1)

            let passkey = TestBrowser(bank.server)
            let token = try #require(await passkey.send("GET", "/").csrf)
            let options = await passkey.send("POST", "/signin/passkeyless/options", json: token)
            #expect(options.status != 403 && passkey.cookies[SessionCookie.name] != nil)
            #expect(bank.app.sessions.find(passkey.cookies[SessionCookie.name], now: bank.clock.now)?.csrf == token)
        }
    }

    @Test(
        "a visitor's post without its nonce cookie, with another browser's token or a made-up one, is refused and starts nothing"
    )
    func forgedVisitorPosts() async throws {
        try await BankHarness.run { bank in
            let victim = TestBrowser(bank.server)
            let attacker = TestBrowser(bank.server)
            _ = await victim.send("GET", "/")
            let theirs = try #require(await attacker.send("GET", "/").csrf)
            #expect(
                await victim.send("POST", "/signin", form: ["csrf": theirs, "email": "ann@example.com"]).status == 403)
            #expect(
                await victim.send(
                    "POST", "/signin", form: ["csrf": String(repeating: "x", count: 43), "email": "ann@example.com"]
                ).status == 403)
            #expect(
                bank.server.respond(
                    method: "POST", path: "/signin", headers: ["Content-Type": "application/x-www-form-urlencoded"],
                    body: Array("csrf=\(theirs)&email=a%40b.c".utf8)
                ).status == 403)
            #expect(await victim.send("POST", "/signin/passkeyless/options", json: theirs).status == 403)
            #expect(bank.app.sessions.counts.all == 0)
        }
    }

    static let start = Date(timeIntervalSince1970: 1_900_000_000)

    /// A signed-in customer's session put in `sessions` at `start`: its cookie and the session.
    static func customer(in sessions: BankSessions) -> (cookie: String, session: BankSession) {
        let customer = BankSession(now: start)
        customer.set(stage: .signedIn(customerID: "c1", email: "ann@example.com"))
        return (sessions.issue(replacing: nil, carrying: customer, secure: false, now: start).0.value, customer)
    }

    @Test(
        "20,000 pre-sign-in sessions leave at most the cap, the oldest gone first; signed-in sessions are not dropped for room"
    )
    func preSignInCap() {
        let sessions = BankSessions(capacity: 10_000)
        let now = Self.start
        let (signedIn, customer) = Self.customer(in: sessions)
        let cookies = (0..<20_000).map { _ in sessions.issue(replacing: nil, secure: false, now: now).0.value }
        #expect(sessions.counts.preSignIn == 10_000 && sessions.counts.all == 10_001)
        #expect(sessions.find(cookies[0], now: now) == nil && sessions.find(cookies[9_999], now: now) == nil)
        #expect(sessions.find(cookies[10_000], now: now) != nil && sessions.find(cookies[19_999], now: now) != nil)
        #expect(sessions.find(signedIn, now: now) === customer)
        // Ended and rotated sessions free their place.
        sessions.end(cookies[19_999])
        _ = sessions.issue(replacing: cookies[19_998], secure: false, now: now)
        #expect(sessions.counts.preSignIn == 9_999)
    }

    @Test("the sweep drops idle sessions: not signed in after 30 minutes, signed in after 12 hours")
    func sweep() {
        let sessions = BankSessions(capacity: 100)
        let start = Self.start
        let signedIn = Self.customer(in: sessions).cookie
        let idle = sessions.issue(replacing: nil, secure: false, now: start).0.value
        let busy = sessions.issue(replacing: nil, secure: false, now: start).0.value
        sessions.find(busy, now: start)?.touch(start + 1_700)
        #expect(sessions.sweep(now: start + 1_801) == 1)
        #expect(sessions.counts == (2, 1))
        #expect(sessions.find(busy, now: start + 1_801) != nil && sessions.find(signedIn, now: start + 1_801) != nil)
        #expect(sessions.sweep(now: start + 12 * 3600 + 1) == 2)
        #expect(sessions.counts == (0, 0) && sessions.find(idle, now: start) == nil)
    }
}
