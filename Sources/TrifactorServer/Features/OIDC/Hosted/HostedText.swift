import Foundation
import HTTP
import Messaging

/// The hosted pages' words in one language: one JSON file per language in
/// `Resources/pages/` (the languages of the messages), read by the same
/// catalog as the texts and emails, so a page and the text it sends speak
/// alike. A value put into a sentence (a name, an address, a code) is kept
/// apart from right-to-left text by Unicode isolates.
struct HostedText: Sendable {
    static let catalog = MessageCatalog.load(
        (Bundle.module.resourceURL?.appendingPathComponent("pages") ?? URL(fileURLWithPath: "pages")).path)

    /// The language code (`de`).
    let language: String

    static let english = HostedText(language: "en")

    /// The language of a page: the first of the client's `ui_locales` (OIDC Core §3.1.2.1) this server speaks,
    /// else the account's own once the user has proved who they are (never before: it would tell whether an
    /// email has an account), else the browser's `Accept-Language`, else the server's default.
    static func negotiate(
        uiLocales: [String] = [], account: String? = nil, request: Request?, fallback: String
    ) -> HostedText {
        let chosen =
            catalog.language(preferring: uiLocales) ?? catalog.language(of: account)
            ?? catalog.language(
                preferring: MessageCatalog.preferences(acceptLanguage: request?.header("Accept-Language")))
            ?? catalog.code(for: fallback)
        return HostedText(language: chosen)
    }

    private var locale: Locale { formattingLocale }

    /// The locale this language's numbers, amounts and times are written in.
    var formattingLocale: Locale { Locale(identifier: Self.catalog.localeIdentifier(language)) }

    var isRightToLeft: Bool { Self.catalog.languages[language]?.direction == "rtl" }

    /// The sentence `key`, its `{placeholders}` filled.
    func callAsFunction(_ key: String, _ values: [String: String] = [:]) -> String {
        Self.catalog.render(key, language: language, values.mapValues { .text($0) })
    }

    /// A whole number written as this language writes it.
    func number(_ value: Int) -> String {
        value.formatted(.number.locale(locale))
    }

    /// An amount of money as this language writes it (`€1,234.50`, `1.234,50 €`): the formatter of the texts and
    /// calls that name a payment, so the page and the message read alike.
    func amount(_ amount: String, currency: String) -> String {
        MessageCatalog.amount(amount, currency: currency, locale: Self.catalog.localeIdentifier(language))
    }

    /// "2 minutes", "30 seconds", in this language (its plural forms from ICU).
    func duration(_ seconds: Int) -> String {
        // The figure may come from a URL (an error's `wait=`): clamped, so no value can overflow.
        let seconds = min(max(seconds, 1), 86_400)
        if seconds >= 90 {
            return Duration.seconds((seconds + 59) / 60 * 60).formatted(
                .units(allowed: [.minutes], width: .wide).locale(locale))
        }
        return Duration.seconds(seconds).formatted(.units(allowed: [.seconds], width: .wide).locale(locale))
    }
}
