import Foundation
import HTTP
import Messaging
import MessagingTestSupport
import ServerTestSupport
import Store
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

/// The hosted pages in the user's language: every language of the messages,
/// chosen from `ui_locales`, the account (only once the password is proven)
/// or the browser, written right to left where the language is.
@Suite("The hosted pages speak the user's language")
struct HostedLanguageTests {
    static let configuration = ProviderFlowTests.configuration
    static let query = ProviderFlowTests.query

    static func placeholders(_ text: String) -> [String] {
        text.split(separator: "{", omittingEmptySubsequences: false).dropFirst().compactMap {
            $0.split(separator: "}").first.map(String.init)
        }.sorted()
    }

    @Test("every language of the messages has every page text, with exactly the placeholders of the English one")
    func complete() throws {
        let pages = HostedText.catalog
        let english = try #require(pages.languages["en"])
        for code in MessageFixtures.languages {
            let language = try #require(pages.languages[code], "no pages/\(code).json")
            #expect(Set(language.messages.keys) == Set(english.messages.keys), "\(code): keys differ")
            for (key, text) in english.messages {
                let translated = try #require(language.messages[key], "\(code) has no \(key)")
                #expect(Self.placeholders(translated) == Self.placeholders(text), "\(code) \(key): \(translated)")
                // A sentence left in English (a word like "Password" may be the same in another language).
                #expect(
                    code == "en" || text.split(separator: " ").count < 3 || translated != text,
                    "\(code) \(key) is English")
            }
            let messages = try #require(MessageCatalog.bundled.languages[code])
            #expect(language.direction == messages.direction && language.voice == messages.voice, "\(code)")
        }
        #expect(Set(pages.languages.keys) == Set(MessageFixtures.languages))
    }

    @Test(
        "the language is the first of ui_locales the server speaks, else the account's, else the browser's, else the default"
    )
    func negotiation() {
        func chosen(_ ui: [String], account: String? = nil, accept: String? = nil, fallback: String = "en") -> String {
            var headers: [String: String] = [:]
            if let accept { headers["accept-language"] = accept }
            let request = Request(id: "t", method: "GET", path: "/authorize", headers: headers)
            return HostedText.negotiate(uiLocales: ui, account: account, request: request, fallback: fallback).language
        }
        #expect(chosen(["tlh", "de-CH", "fr"], account: "ja", accept: "es") == "de")
        #expect(chosen(["tlh"], account: "pt-BR", accept: "es") == "pt")
        #expect(chosen([], accept: "de-CH,de;q=0.9,fr;q=0.95,*;q=0.1") == "de")
        #expect(chosen([], accept: "fr;q=0.2, it;q=0.8") == "it")
        #expect(chosen([], accept: "fr;q=0, sv") == "en", "a refused language is never chosen")
        #expect(chosen([], accept: "*", fallback: "nl") == "nl")
        #expect(chosen([], fallback: "xx") == "en")
        #expect(
            MessageCatalog.preferences(acceptLanguage: "de-CH, de;q=0.9, en;q=0.8, *;q=0.1") == ["de-CH", "de", "en"])
        #expect(MessageCatalog.preferences(acceptLanguage: "en;q=abc, ru") == ["ru"])
    }

    @Test("waiting times and counts are written in the language, with its plural forms")
    func durations() {
        #expect(HostedText(language: "en").duration(120) == "2 minutes")
        #expect(HostedText(language: "ru").duration(120) == "2 минуты")
        #expect(HostedText(language: "ru").duration(300) == "5 минут")
        #expect(HostedText(language: "de").duration(1) == "1 Sekunde")
        #expect(HostedText(language: "fa").number(3) == "۳")
    }

    /// The first page of a sign-in started with `extra` in its query.
    static func firstPage(_ browser: HostedBrowser, _ extra: String = "", headers: [String: String] = [:])
        -> HostedBrowser.Page
    {
        let start = browser.request("GET", "/authorize?" + query + extra, headers: headers)
        var page = start
        while page.status == 303, let location = page.location, location.hasPrefix("/") {
            page = browser.request("GET", location, headers: headers)
        }
        return page
    }

    @Test("ui_locales names the page's language; Arabic is written right to left; discovery lists the languages")
    func uiLocales() throws {
        try Backend.all[0].withServer(Self.configuration) { server in
            _ = try ProviderFlowTests.client(server)
            let german = HostedText(language: "de")
            let page = Self.firstPage(HostedBrowser(server), "&ui_locales=tlh%20de-AT%20fr")
            #expect(page.body.contains("<html lang=\"de\">"))
            #expect(page.body.contains(german("signin.title", ["client": "Relying Party"])))
            #expect(page.body.contains(german("common.cancel", ["client": "Relying Party"])))
            #expect(!page.body.contains("Sign in to"), "no English left on a German page")

            let arabic = Self.firstPage(HostedBrowser(server), "&ui_locales=ar")
            #expect(arabic.body.contains("<html lang=\"ar\" dir=\"rtl\">"))
            // The client's name inside Arabic text keeps its own direction.
            #expect(arabic.body.contains("\u{2068}Relying Party\u{2069}"))

            let french = Self.firstPage(HostedBrowser(server), headers: ["Accept-Language": "fr-CA,fr;q=0.9"])
            #expect(french.body.contains("<html lang=\"fr\">"))

            let discovery = try server.send("GET", "/.well-known/openid-configuration")
            let metadata = try #require(try JSONSerialization.jsonObject(with: Data(discovery.body)) as? [String: Any])
            #expect(Set(metadata["ui_locales_supported"] as? [String] ?? []) == Set(MessageFixtures.languages))
        }
    }

    @Test(
        "the account's language follows the proven password, never the typed email (which would tell that the account exists)",
        arguments: Backend.all)
    func accountLanguage(backend: Backend) throws {
        try backend.withServer(Self.configuration) { server in
            _ = try ProviderFlowTests.client(server)
            let user = try MFAClient(server, email: "kenji@example.com")
            _ = try user.enrollTOTP()
            try server.database.transaction { db in
                let id = try #require(try AccountRepository.find(email: "kenji@example.com", on: db)).id
                try AccountRepository.setLocale(id, "ja-JP", on: db)
            }
            let browser = HostedBrowser(server)
            var page = Self.firstPage(browser)
            let email = try #require(page.form("/authorize/sign-in"))
            page = browser.follow(
                browser.request("POST", "/authorize/sign-in", form: email.merging(["email": user.email]) { $1 }))
            #expect(page.body.contains("<html lang=\"en\">"), "the password page must not tell the account's language")
            let password = try #require(page.form("/authorize/password"))
            page = browser.follow(
                browser.request(
                    "POST", "/authorize/password", form: password.merging(["password": user.password]) { $1 }))
            #expect(page.body.contains("<html lang=\"ja\">"))
            #expect(page.body.contains(HostedText(language: "ja")("code.totp.label")))

            // A wrong code's sentence is Japanese too, with the tries left from the first wrong code on.
            let code = try #require(page.form("/authorize/second-factor"))
            page = browser.follow(
                browser.request("POST", "/authorize/second-factor", form: code.merging(["code": "000000"]) { $1 }))
            let ja = HostedText(language: "ja")
            #expect(page.status == 422 && page.body.contains(ja("code.wrong.left", ["left": ja.number(4)])))

            // "Not you?": another person, whose account names no language, takes over this browser's sign-in.
            // Nothing of the first account's language reaches their pages, before or after their password.
            let other = try MFAClient(server, email: "ola@example.com")
            _ = try other.enrollTOTP()
            let flow = try #require(code["flow"])
            page = browser.request("GET", "/authorize/sign-in?flow=\(flow)&other=1")
            let again = try #require(page.form("/authorize/sign-in"))
            page = browser.follow(
                browser.request("POST", "/authorize/sign-in", form: again.merging(["email": other.email]) { $1 }))
            #expect(page.body.contains("<html lang=\"en\">"), "the next person's password page is not Japanese")
            let theirs = try #require(page.form("/authorize/password"))
            page = browser.follow(
                browser.request(
                    "POST", "/authorize/password", form: theirs.merging(["password": other.password]) { $1 }))
            #expect(page.body.contains("<html lang=\"en\">") && page.body.contains("Code from your authenticator app"))
        }
    }

    @Test("a text sent from a hosted page speaks the page's language and bears the app's name", arguments: Backend.all)
    func textLanguage(backend: Backend) throws {
        try backend.withServer(Self.configuration) { server in
            _ = try ProviderFlowTests.client(server)
            let user = try MFAClient(server, email: "anna@example.com")
            _ = try user.enrollPhone("+447400123456")
            let browser = HostedBrowser(server)
            var page = Self.firstPage(browser, "&ui_locales=de")
            let email = try #require(page.form("/authorize/sign-in"))
            page = browser.follow(
                browser.request("POST", "/authorize/sign-in", form: email.merging(["email": user.email]) { $1 }))
            let password = try #require(page.form("/authorize/password"))
            page = browser.follow(
                browser.request(
                    "POST", "/authorize/password", form: password.merging(["password": user.password]) { $1 }))
            let send = try #require(page.form("/authorize/second-factor/send"), "no send form: \(page.body)")
            page = browser.follow(
                browser.request("POST", "/authorize/second-factor/send", form: send.merging(["how": "sms"]) { $1 }))
            #expect(page.body.contains("<html lang=\"de\">"))
            let text = try #require(try user.lastSMS("+447400123456"))
            #expect(text.hasPrefix("Relying Party: Ihr Bestätigungscode lautet "), "\(text)")
        }
    }
}
