import Foundation
import HTTP
import Messaging
import ServerTestSupport
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

/// The OpenID Provider end to end on each database: the hosted sign-in, the
/// code exchange, UserInfo, refresh rotation with reuse detection, and a
/// logout that revokes the grant and queues a back-channel logout token.
@Suite("The OpenID Provider signs a user in to a relying party and signs them out again")
struct ProviderFlowTests {
    static let configuration = TestServer.configuration {
        $0.oidc = true
        $0.publicURL = URL(string: "https://op.test")!
    }
    static let query =
        "response_type=code&client_id=rp-1&redirect_uri=https%3A%2F%2Frp.test%2Fcb&scope=openid%20email&state=st&nonce=nn"

    static func client(_ server: TestServer) throws -> String {
        var draft = ClientService.Draft()
        draft.id = "rp-1"
        draft.name = "Relying Party"
        draft.redirectURIs = ["https://rp.test/cb"]
        draft.postLogoutRedirectURIs = ["https://rp.test/bye"]
        draft.backchannelLogoutURI = "https://rp.test/backchannel"
        let registered = try #require(server.services.provider).clients.create(
            draft, by: .host, client: AuditContext(ip: "local", userAgent: nil), actor: "test")
        return "Basic " + Data("rp-1:\(try #require(registered.secret))".utf8).base64EncodedString()
    }

    static func token(_ server: TestServer, _ form: [String: String], basic: String) throws -> (Int, [String: Any]) {
        let answer = try server.send(
            "POST", "/token",
            headers: ["Content-Type": "application/x-www-form-urlencoded", "Authorization": basic],
            body: Array(HostedBrowser.encode(form).utf8))
        return (answer.status, (try? JSONSerialization.jsonObject(with: Data(answer.body))) as? [String: Any] ?? [:])
    }

    /// Signs `email` in through the hosted pages (email, password, consent); returns the code sent back.
    static func signIn(_ browser: HostedBrowser, email: String, password: String) throws -> String {
        var page = browser.follow(browser.request("GET", "/authorize?" + query))
        if let form = page.form("/authorize/sign-in") {
            page = browser.follow(
                browser.request("POST", "/authorize/sign-in", form: form.merging(["email": email]) { $1 }))
            let form = try #require(page.form("/authorize/password"), "no password page: \(page.body.prefix(400))")
            page = browser.request("POST", "/authorize/password", form: form.merging(["password": password]) { $1 })
            page = browser.follow(page)
        }
        if let consent = page.form("/authorize/consent") {
            page = browser.request("POST", "/authorize/consent", form: consent.merging(["decision": "allow"]) { $1 })
        }
        let location = try #require(page.location, "no redirect to the client: \(page.status) \(page.body.prefix(400))")
        #expect(location.hasPrefix("https://rp.test/cb?"))
        let back = HostedBrowser.query(location)
        #expect(back["iss"] == "https://op.test" && back["state"] == "st")
        return try #require(back["code"])
    }

    @Test(
        "a user signs in on the hosted pages; the client gets an ID token with its nonce, UserInfo, and rotating refresh tokens whose reuse ends the family",
        arguments: Backend.all)
    func codeFlow(backend: Backend) throws {
        try backend.withServer(Self.configuration) { server in
            let basic = try Self.client(server)
            try server.signUp("ann@example.com", password: "correct horse battery")
            let browser = HostedBrowser(server)
            let code = try Self.signIn(browser, email: "ann@example.com", password: "correct horse battery")
            let redeem = ["grant_type": "authorization_code", "code": code, "redirect_uri": "https://rp.test/cb"]
            let (status, tokens) = try Self.token(server, redeem, basic: basic)
            #expect(status == 200)
            let id = HostedBrowser.claims(try #require(tokens["id_token"] as? String))
            #expect(id["iss"] as? String == "https://op.test" && id["aud"] as? String == "rp-1")
            #expect(id["nonce"] as? String == "nn" && id["acr"] as? String == "urn:trifactor:acr:password")
            #expect(id["email"] == nil, "the ID token is minimal unless the client asks for the profile in it")
            let access = try #require(tokens["access_token"] as? String)
            let info = try server.send("GET", "/userinfo", headers: ["Authorization": "Bearer \(access)"])
            #expect(info.status == 200 && info.text.contains("\"email\":\"ann@example.com\""))

            // The code was spent: a second redemption is refused and revokes what the first gave.
            #expect(try Self.token(server, redeem, basic: basic).1["error"] as? String == "invalid_grant")
            #expect(try server.send("GET", "/userinfo", headers: ["Authorization": "Bearer \(access)"]).status == 401)
        }
    }

    @Test(
        "a cancelled sign-in is over: opened again by Back, its password page is the ended page and no code ever follows",
        arguments: Backend.all)
    func cancelEndsTheFlow(backend: Backend) throws {
        try backend.withServer(Self.configuration) { server in
            _ = try Self.client(server)
            try server.signUp("cal@example.com", password: "correct horse battery")
            let browser = HostedBrowser(server)
            var page = browser.follow(browser.request("GET", "/authorize?" + Self.query))
            let email = try #require(page.form("/authorize/sign-in"))
            page = browser.follow(
                browser.request("POST", "/authorize/sign-in", form: email.merging(["email": "cal@example.com"]) { $1 }))
            let password = try #require(page.form("/authorize/password"))
            let cancel = try #require(page.form("/authorize/cancel"))
            page = browser.request("POST", "/authorize/cancel", form: cancel)
            #expect(HostedBrowser.query(try #require(page.location))["error"] == "access_denied")
            let flow = try #require(password["flow"])
            page = browser.request("GET", "/authorize/password?flow=\(flow)")
            #expect(page.status == 400 && page.form("/authorize/password") == nil, "Back shows the ended page")
            page = browser.request(
                "POST", "/authorize/password", form: password.merging(["password": "correct horse battery"]) { $1 })
            #expect(page.location?.contains("code=") != true, "one request, one answer: no code after the denial")
        }
    }

    @Test("a spent refresh token presented again revokes its whole family", arguments: Backend.all)
    func refreshReuse(backend: Backend) throws {
        try backend.withServer(Self.configuration) { server in
            let basic = try Self.client(server)
            try server.signUp("bo@example.com", password: "correct horse battery")
            let code = try Self.signIn(
                HostedBrowser(server), email: "bo@example.com", password: "correct horse battery")
            let (_, first) = try Self.token(
                server, ["grant_type": "authorization_code", "code": code, "redirect_uri": "https://rp.test/cb"],
                basic: basic)
            let r1 = try #require(first["refresh_token"] as? String)
            let (status, second) = try Self.token(
                server, ["grant_type": "refresh_token", "refresh_token": r1], basic: basic)
            #expect(status == 200)
            let r2 = try #require(second["refresh_token"] as? String)
            #expect(r2 != r1)
            #expect(
                try Self.token(server, ["grant_type": "refresh_token", "refresh_token": r1], basic: basic).1["error"]
                    as? String == "invalid_grant")
            #expect(
                try Self.token(server, ["grant_type": "refresh_token", "refresh_token": r2], basic: basic).1["error"]
                    as? String == "invalid_grant", "the newest token of a reused family is revoked too")
            #expect(try server.auditKinds().contains("oidc.refresh_reused"))
        }
    }

    @Test(
        "logout with an ID token hint signs the browser out, ends the grant, and queues a back-channel logout token",
        arguments: Backend.all)
    func logout(backend: Backend) throws {
        try backend.withServer(Self.configuration) { server in
            let basic = try Self.client(server)
            try server.signUp("cy@example.com", password: "correct horse battery")
            let browser = HostedBrowser(server)
            let code = try Self.signIn(browser, email: "cy@example.com", password: "correct horse battery")
            let (_, tokens) = try Self.token(
                server, ["grant_type": "authorization_code", "code": code, "redirect_uri": "https://rp.test/cb"],
                basic: basic)
            let idToken = try #require(tokens["id_token"] as? String)
            let sid = try #require(HostedBrowser.claims(idToken)["sid"] as? String)
            let bye = browser.request(
                "GET",
                "/logout?id_token_hint=\(idToken)&post_logout_redirect_uri=https%3A%2F%2Frp.test%2Fbye&state=s2")
            #expect(bye.status == 303 && bye.location == "https://rp.test/bye?state=s2")
            // The browser's sign-in is gone: a new request shows the email page again.
            #expect(
                browser.follow(browser.request("GET", "/authorize?" + Self.query)).form("/authorize/sign-in") != nil)
            let refresh = try #require(tokens["refresh_token"] as? String)
            #expect(
                try Self.token(server, ["grant_type": "refresh_token", "refresh_token": refresh], basic: basic).1[
                    "error"]
                    as? String == "invalid_grant")
            server.tick()
            let sent = server.sender.sent.filter { $0.channel == .logout }
            #expect(sent.count == 1 && sent.first?.to == "https://rp.test/backchannel")
            let logout = HostedBrowser.claims(try #require(sent.first?.text))
            #expect(logout["sid"] as? String == sid && logout["aud"] as? String == "rp-1")
            #expect((logout["events"] as? [String: Any])?["http://schemas.openid.net/event/backchannel-logout"] != nil)
        }
    }

    @Test("a post-logout address the client did not register is an error page, never a redirect")
    func logoutOpenRedirect() throws {
        try Backend.all[0].withServer(Self.configuration) { server in
            _ = try Self.client(server)
            let page = HostedBrowser(server).request(
                "GET", "/logout?client_id=rp-1&post_logout_redirect_uri=https%3A%2F%2Fevil.test%2F")
            #expect(page.status == 400 && page.location == nil)
        }
    }
}
