import Foundation
import Messaging
import MessagingTestSupport
import Testing

@testable import TrifactorServer

@Suite("Messages in many languages")
struct MessageCatalogTests {
    static let catalog = MessageFixtures.catalog
    static let required = MessageFixtures.languages

    @Test("the language is the request's locale, else the user's, else the default")
    func choice() {
        let texts = MessageTexts(catalog: Self.catalog.fallingBack(to: "fr"), brand: "Acme")
        #expect(texts.language(locale: "de-de", user: "ja") == "de")
        #expect(texts.language(locale: "pt-BR") == "pt")
        #expect(texts.language(locale: "id-id", user: "ja") == "ja")
        #expect(texts.language(locale: nil, user: nil) == "fr")
        #expect(texts.language(locale: "xx", user: "yy") == "fr")
        #expect(MessageCatalog.voiceTag(for: "pt-br") == "pt-BR")
        #expect(MessageCatalog.voiceTag(for: "ar") == "ar-SA")
        #expect(MessageCatalog.voiceTag(for: "id-id") == "en-US")
    }

    @Test("amounts and numbers take the language's formatting; right-to-left texts isolate what is inserted")
    func formatting() {
        let texts = MessageTexts(catalog: Self.catalog, brand: "Acme")
        let transfer = CodeIntent.transfer(amount: "1250.50", currency: "EUR", payee: "Alice Example")
        let german = texts.code(.sms, code: "123456", minutes: 5, intent: transfer, language: "de")
        #expect(
            german.contains("1.250,50 €") && german.contains("123456") && german.contains("Alice Example"), "\(german)")
        let english = texts.code(.sms, code: "123456", minutes: 5, intent: transfer, language: "en")
        #expect(english.contains("€1,250.50"), "\(english)")
        let arabic = texts.code(.sms, code: "123456", minutes: 5, intent: transfer, language: "ar")
        #expect(arabic.contains("\u{2068}123456\u{2069}") && arabic.contains("\u{2068}Acme\u{2069}"), "\(arabic)")
        #expect(arabic.unicodeScalars.contains { (0x0600...0x06FF).contains($0.value) })
        let email = texts.email("password_changed", language: "fr", ["sessions": .number(1234)])
        #expect(email.subject.contains("Acme"))
        #expect(email.body.contains("1\u{202F}234") || email.body.contains("1\u{00A0}234"), "\(email.body)")
    }

    @Test("a text may take more segments when the operator allows them, and keeps its optional sentences then")
    func segments() {
        let transfer = CodeIntent.transfer(
            amount: "99.00", currency: "USD", payee: String(repeating: "Payee ", count: 12))
        let one = MessageTexts(catalog: Self.catalog, brand: "Trifactor").code(
            .sms, code: "482913", minutes: 10, intent: transfer, language: "en")
        let two = MessageTexts(catalog: Self.catalog, brand: "Trifactor", maxSegments: 2).code(
            .sms, code: "482913", minutes: 10, intent: transfer,
            language: "en")
        #expect(
            !one.contains("Never share it.") && two.contains("Never share it.") && SMSText.segments(two).count == 2,
            "\(one) | \(two)")
    }

    @Test(
        "in every language a text keeps its code in one segment when it can, and a call says the code twice, digit by digit"
    )
    func everyLanguage() {
        let texts = MessageTexts(catalog: Self.catalog, brand: "Trifactor")
        for code in Self.required {
            let sms = texts.code(.sms, code: "482913", minutes: 10, intent: .code, language: code)
            #expect(sms.contains("482913") && SMSText.segments(sms).count == 1, "\(code): \(sms)")
            let long = texts.code(
                .sms, code: "482913", minutes: 10,
                intent: .transfer(amount: "99.00", currency: "USD", payee: String(repeating: "Payee ", count: 12)),
                language: code)
            #expect(long.contains("482913") && long.contains("Payee Payee"), "\(code): \(long)")
            let call = texts.code(.voice, code: "482913", minutes: 10, intent: .code, language: code)
            #expect(call.components(separatedBy: "4, 8, 2, 9, 1, 3").count == 3, "\(code): \(call)")
        }
    }
}
