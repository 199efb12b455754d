import API
import Core
import Foundation
import HTTP
import ServerTestSupport
import Sitekeys
import Store
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

@Suite("Sitekeys: stored per user, set through the API, shown only on a recognised browser")
struct SitekeyTests {
    @Test(
        "a user sets their sitekey with their session and reads it back; it is audited by picture, never by phrase",
        arguments: Backend.all)
    func setAndRead(backend: Backend) throws {
        try backend.withServer { server throws in
            let token = try #require(try server.signUp("ann@example.com"))
            let none = try server.get("/v1/account/sitekey", token: token)
            #expect(none.status == 404)
            #expect(try JSONDecoder().decode(Problem.self, from: Data(none.body)).code == .notFound)
            let set = try server.send(
                "PUT", "/v1/account/sitekey", SitekeyBody(picture: "owl", phrase: "  night watch "), token: token)
            #expect(set.status == 200)
            #expect(try set.decode(SitekeyBody.self) == SitekeyBody(picture: "owl", phrase: "night watch"))
            #expect(
                try server.get("/v1/account/sitekey", token: token).decode(SitekeyBody.self)
                    == SitekeyBody(picture: "owl", phrase: "night watch"))
            // Choosing again replaces it.
            _ = try server.send(
                "PUT", "/v1/account/sitekey", SitekeyBody(picture: "kite", phrase: "windy hill"), token: token)
            #expect(
                try server.get("/v1/account/sitekey", token: token).decode(SitekeyBody.self)
                    == SitekeyBody(picture: "kite", phrase: "windy hill"))
            #expect(try server.auditDetails("sitekey.set") == ["picture=owl", "picture=kite"])
            let stored = try server.database.read {
                try $0.query("SELECT phrase FROM user_sitekeys", []).map { try $0.text("phrase") }
            }
            #expect(stored == ["windy hill"])
        }
    }

    @Test(
        "a sitekey outside the pictures, or with a phrase too short, too long or with markup, is a 422 naming the field",
        arguments: Backend.all)
    func refusals(backend: Backend) throws {
        try backend.withServer { server throws in
            let token = try #require(try server.signUp("ann@example.com"))
            for (picture, phrase, field) in [
                ("../../etc/passwd", "night watch", "picture"), ("dragon", "night watch", "picture"),
                ("owl", "hi", "phrase"), ("owl", String(repeating: "a", count: 41), "phrase"),
                ("owl", "<b>bold</b>", "phrase"),
            ] {
                let refused = try server.send(
                    "PUT", "/v1/account/sitekey", SitekeyBody(picture: picture, phrase: phrase), token: token)
                #expect(refused.status == 422)
                #expect(refused.header("content-type")?.hasPrefix("application/problem+json") == true)
                let problem = try JSONDecoder().decode(Problem.self, from: Data(refused.body))
                #expect(problem.code == .invalidFields)
                #expect(problem.invalidParams?.map(\.name) == [field])
            }
            #expect(try server.get("/v1/account/sitekey", token: token).status == 404)
            #expect(try server.auditKinds().contains("sitekey.set") == false)
        }
    }

    @Test("reading or setting a sitekey without a session is a 401", arguments: Backend.all)
    func needsSession(backend: Backend) throws {
        try backend.withServer { server throws in
            #expect(try server.get("/v1/account/sitekey").status == 401)
            #expect(
                try server.send("PUT", "/v1/account/sitekey", SitekeyBody(picture: "owl", phrase: "night watch"))
                    .status == 401)
        }
    }

    @Test("the hosted pages serve the pictures from an allow-list: any other name is a 404")
    func pictures() throws {
        try Backend.all[0].withServer(ProviderFlowTests.configuration) { server throws in
            let owl = try server.get("/sitekeys/owl.svg")
            #expect(owl.status == 200)
            #expect(owl.header("content-type") == "image/svg+xml")
            #expect(owl.text.contains("<svg"))
            for name in ["dragon.svg", "owl", "owl.png", "..%2Fopenapi.json", "%2E%2E.svg"] {
                #expect(try server.get("/sitekeys/\(name)").status == 404, "\(name)")
            }
            #expect(Sitekey.pictures.allSatisfy { SitekeyPictures.svg($0) != nil })
        }
    }

    @Test(
        "a browser recognised for an account shows its sitekey for that account's email only; a new browser, another email or an unknown one see none",
        arguments: Backend.all)
    func recognisedBrowser(backend: Backend) throws {
        try backend.withServer { server throws in
            let ann = try #require(try server.signUp("ann@example.com"))
            _ = try server.signUp("bob@example.com")
            _ = try server.send(
                "PUT", "/v1/account/sitekey", SitekeyBody(picture: "owl", phrase: "night watch"), token: ann)
            let sitekeys = server.services.sitekeys
            let annID = try #require(
                try server.database.read { try AccountRepository.find(email: "ann@example.com", on: $0) }?.id)
            let client = AuditContext(ip: "192.0.2.1", userAgent: "tests")
            let cookie = try sitekeys.recognise(annID, current: nil, client: client)
            let now = { server.clock.clock.now() }
            let owl = Sitekey(unchecked: "owl", phrase: "night watch")
            #expect(try sitekeys.shown(email: "ann@example.com", cookie: cookie, now: now()) == owl)
            #expect(try sitekeys.shown(email: " ann@EXAMPLE.com", cookie: cookie, now: now()) == owl)
            #expect(try sitekeys.shown(email: "bob@example.com", cookie: cookie, now: now()) == nil)
            #expect(try sitekeys.shown(email: "nobody@example.com", cookie: cookie, now: now()) == nil)
            #expect(try sitekeys.shown(email: "ann@example.com", cookie: nil, now: now()) == nil)
            #expect(
                try sitekeys.shown(email: "ann@example.com", cookie: String(repeating: "A", count: 43), now: now())
                    == nil)
            // Only the cookie's SHA-256 is stored.
            let ids = try server.database.read {
                try $0.query("SELECT id FROM known_browsers", []).map { try $0.text("id") }
            }
            #expect(ids == [RecognisedBrowsers.key(cookie)])
            // Signing in again keeps the same cookie; another account's sign-in takes the browser over.
            #expect(try sitekeys.recognise(annID, current: cookie, client: client) == cookie)
            #expect(try server.auditKinds().filter { $0 == "browser.recognised" }.count == 1)
            // A year on, the browser is new again.
            server.clock.advance(TimeInterval(RecognisedBrowsers.lifetimeSeconds + 1))
            #expect(try sitekeys.shown(email: "ann@example.com", cookie: cookie, now: now()) == nil)
        }
    }

    @Test(
        "a forgotten browser shows no sitekey, and deleting the account erases its sitekey and browsers",
        arguments: Backend.all)
    func forgetAndErase(backend: Backend) throws {
        try backend.withServer { server throws in
            let ann = try #require(try server.signUp("ann@example.com"))
            _ = try server.send(
                "PUT", "/v1/account/sitekey", SitekeyBody(picture: "owl", phrase: "night watch"), token: ann)
            let sitekeys = server.services.sitekeys
            let annID = try #require(
                try server.database.read { try AccountRepository.find(email: "ann@example.com", on: $0) }?.id)
            let client = AuditContext(ip: "192.0.2.1", userAgent: "tests")
            let first = try sitekeys.recognise(annID, current: nil, client: client)
            try sitekeys.forget(first, client: client)
            #expect(try sitekeys.shown(email: "ann@example.com", cookie: first, now: server.clock.clock.now()) == nil)
            #expect(try server.auditKinds().contains("browser.forgotten"))
            _ = try sitekeys.recognise(annID, current: nil, client: client)
            try server.database.transaction { _ = try $0.execute("DELETE FROM users WHERE id = $1", [annID.sql]) }
            let left = try server.database.read {
                try $0.queryOne(
                    "SELECT (SELECT COUNT(*) FROM user_sitekeys) + (SELECT COUNT(*) FROM known_browsers) AS n", [])
            }
            #expect(try left?.int("n") == 0)
        }
    }
}
