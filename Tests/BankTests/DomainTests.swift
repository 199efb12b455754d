import Foundation
import Sitekeys
import Testing
import WebUI

@testable import TrifactorBank

@Suite("Bank domain: amounts, IBANs, sitekeys, HTML, cookies")
struct DomainTests {
    @Test(
        "amounts are parsed into exact minor units",
        arguments: [
            ("250", 25_000), ("250.5", 25_050), ("250.05", 25_005), ("0.01", 1), ("1,5", 150), (" 12.00 ", 1_200),
            ("999999999.99", 99_999_999_999),
        ] as [(String, Int64)])
    func amounts(text: String, minor: Int64) throws {
        #expect(try Amount(parsing: text, currency: "EUR").minorUnits == minor)
    }

    @Test(
        "bad amounts are refused with the reason",
        arguments: [
            ("-5", Amount.Refusal.notPositive), ("0", .notPositive), ("0.00", .notPositive),
            ("1.234", .tooManyDecimals), ("abc", .notANumber),
            ("1e3", .notANumber), ("", .notANumber), ("1.", .notANumber), (".5", .notANumber),
            ("1,000.00", .notANumber), ("1000000000", .tooLarge),
            ("99999999999999999999", .tooLarge), ("١٢", .notANumber), ("+5", .notANumber),
        ])
    func badAmounts(text: String, refusal: Amount.Refusal) {
        #expect(throws: refusal) { try Amount(parsing: text, currency: "EUR") }
    }

    @Test("amounts print for people and for bound actions")
    func formatting() {
        #expect(Amount(minorUnits: 123_456_789, currency: "EUR").description == "EUR 1,234,567.89")
        #expect(Amount(minorUnits: 5, currency: "EUR").plain == "0.05")
        #expect(Amount(minorUnits: -25_000, currency: "EUR").description == "EUR −250.00")
    }

    @Test("IBANs are checked by country length and mod-97; spaces and case do not matter")
    func ibans() throws {
        #expect(try IBAN(parsing: "de89 3704 0044 0532 0130 00").electronic == "DE89370400440532013000")
        #expect(try IBAN(parsing: "GB82WEST12345698765432").description == "GB82 WEST 1234 5698 7654 32")
        #expect(try IBAN(parsing: "NL91ABNA0417164300").electronic.count == 18)
        #expect(throws: IBAN.Refusal.checksum) { try IBAN(parsing: "DE89370400440532013001") }
        #expect(throws: IBAN.Refusal.wrongLength(expected: 22)) { try IBAN(parsing: "DE8937040044053201300") }
        #expect(throws: IBAN.Refusal.unknownCountry) { try IBAN(parsing: "XX89370400440532013000") }
        #expect(throws: IBAN.Refusal.malformed) { try IBAN(parsing: "DE89-3704-0044") }
        #expect(throws: IBAN.Refusal.malformed) { try IBAN(parsing: "<script>") }
    }

    @Test("a chosen sitekey is one of the bundled pictures and a plain phrase of 3 to 40 characters")
    func sitekeys() throws {
        #expect(try Sitekey(picture: "owl", phrase: "  night watch ").phrase == "night watch")
        #expect(Sitekey.pictures.count >= 12)
        #expect(throws: Sitekey.Refusal.unknownPicture) { try Sitekey(picture: "../etc/passwd", phrase: "hello there") }
        #expect(throws: Sitekey.Refusal.phraseLength) { try Sitekey(picture: "owl", phrase: "hi") }
        #expect(throws: Sitekey.Refusal.phraseCharacters) { try Sitekey(picture: "owl", phrase: "<b>bold</b>") }
    }

    @Test("the HTML builder escapes text and attribute values; only constant markup is trusted")
    func htmlEscaping() {
        let hostile = #"<script>alert("x")</script> & 'quotes'"#
        let page = HTML.element(
            "p", ["title": hostile, "hidden": "", "data-x": nil], [.text(hostile), .text("and \(hostile)"), "!"])
        #expect(
            page.rendered
                == #"<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quotes&#39;" hidden>"#
                + #"&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quotes&#39;and &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quotes&#39;!</p>"#
        )
        #expect(HTML.element("input", ["name": "a"]).rendered == #"<input name="a">"#)
        #expect(HTML.trusted("<hr>").rendered == "<hr>")
        #expect(HTML.text("a\u{0}b").rendered == "a\u{FFFD}b")
    }

    @Test("the session cookie is HttpOnly, SameSite=Strict, Secure under TLS; a malformed cookie is not read")
    func cookies() {
        let cookie = SessionCookie.fresh(secure: true)
        #expect(cookie.value.count == 43)
        #expect(cookie.setCookie == "bank_session=\(cookie.value); Path=/; HttpOnly; SameSite=Strict; Secure")
        #expect(!SessionCookie.fresh(secure: false).setCookie.contains("Secure"))
        #expect(SessionCookie.value(in: "theme=dark; bank_session=\(cookie.value)") == cookie.value)
        #expect(SessionCookie.value(in: "bank_session=short") == nil)
        #expect(SessionCookie.value(in: "bank_session=\(String(repeating: "%", count: 43))") == nil)
        #expect(SessionCookie.cleared(secure: false).contains("Max-Age=0"))
        #expect(SessionCookie.fresh(secure: true) != cookie)
    }

    @Test("a CSRF token is random per session and compared exactly")
    func csrf() {
        let token = CSRF.token()
        #expect(token.count == 43 && token != CSRF.token())
        #expect(CSRF.isValid(submitted: token, expected: token))
        #expect(!CSRF.isValid(submitted: nil, expected: token))
        #expect(!CSRF.isValid(submitted: token + "x", expected: token))
        #expect(!CSRF.isValid(submitted: "", expected: ""))
    }
}
