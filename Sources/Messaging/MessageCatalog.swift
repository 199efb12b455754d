import Foundation

/// The texts of every message, one JSON file per language in `Templates/`
/// (`en.json`, `de.json`, …): `{placeholder}`s filled with values formatted
/// for the language (numbers, amounts with their currency). In right-to-left
/// languages each inserted value is wrapped in Unicode isolates (FSI…PDI), so
/// a Latin brand, a code or an amount keeps its own direction inside Arabic or
/// Persian text.
package struct MessageCatalog: Sendable {
    /// One language's file.
    package struct Language: Sendable, Decodable {
        package let language: String
        package let name: String
        package let direction: String
        /// The BCP 47 tag a speech engine is given (`de-DE`).
        package let voice: String
        package let messages: [String: String]

        var isRightToLeft: Bool { direction == "rtl" }
    }

    /// A value put into a message.
    package enum Value: Sendable {
        case text(String)
        case number(Int)
        /// A decimal amount as written by the API (`"250.00"`) in `currency` (ISO 4217).
        case amount(String, currency: String)
    }

    package let languages: [String: Language]
    /// The language of a message whose locale names none of ours.
    package let fallback: String

    /// The catalog shipped with Trifactor.
    package static let bundled: MessageCatalog = {
        var languages: [String: Language] = [:]
        let folder = Bundle.module.resourceURL?.appendingPathComponent("Templates") ?? URL(fileURLWithPath: "Templates")
        let urls = ((try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? [])
            .filter { $0.pathExtension == "json" }
        for url in urls {
            guard let data = try? Data(contentsOf: url),
                let language = try? JSONDecoder().decode(Language.self, from: data)
            else {
                fatalError("message template \(url.lastPathComponent) is not valid")
            }
            languages[language.language] = language
        }
        precondition(languages["en"] != nil, "the English message templates are missing")
        return MessageCatalog(languages: languages, fallback: "en")
    }()

    package init(languages: [String: Language], fallback: String) {
        self.languages = languages
        self.fallback = languages[fallback] == nil ? "en" : fallback
    }

    /// The same catalog with another fallback language (an unknown one keeps English).
    package func fallingBack(to code: String) -> MessageCatalog { MessageCatalog(languages: languages, fallback: code) }

    /// The language code for `locale` (`pt-br` → `pt`, `zh-Hans-CN` → `zh`), or the fallback.
    package func code(for locale: String?) -> String { language(of: locale) ?? fallback }

    /// The language code of `locale` when the catalog has that language.
    package func language(of locale: String?) -> String? {
        guard let locale else { return nil }
        let primary = locale.lowercased().split(whereSeparator: { $0 == "-" || $0 == "_" }).first.map(String.init) ?? ""
        return languages[primary] == nil ? nil : primary
    }

    /// The speech tag for a message's locale: the locale itself when it is of
    /// one of our languages (`pt-br` → `pt-BR`), else the fallback's voice.
    package static func voiceTag(for locale: String) -> String {
        let catalog = bundled
        let parts = locale.split(whereSeparator: { $0 == "-" || $0 == "_" })
        let code = catalog.code(for: locale)
        if parts.count == 2, parts[0].lowercased() == code, parts[1].count == 2 {
            return "\(code)-\(parts[1].uppercased())"
        }
        return catalog.languages[code]?.voice ?? "en-US"
    }

    /// Message `key` in `language`, its placeholders filled. A key missing
    /// from a language falls back to English (the catalog test forbids it).
    package func render(_ key: String, language: String, _ values: [String: Value]) -> String {
        let chosen = languages[language] ?? languages[fallback]!
        guard let template = chosen.messages[key] ?? languages["en"]?.messages[key] else { return key }
        let locale = Locale(identifier: chosen.voice.replacingOccurrences(of: "-", with: "_"))
        var out = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            out += rest[..<open]
            let name = String(rest[rest.index(after: open)..<close])
            if let value = values[name] {
                let text = Self.format(value, locale: locale)
                out += chosen.isRightToLeft ? "\u{2068}\(text)\u{2069}" : text
            } else {
                out += rest[open...close]
            }
            rest = rest[rest.index(after: close)...]
        }
        return out + rest
    }

    static func format(_ value: Value, locale: Locale) -> String {
        switch value {
        case .text(let text):
            return text
        case .number(let number):
            let formatter = NumberFormatter()
            formatter.locale = locale
            formatter.numberStyle = .decimal
            return formatter.string(from: NSNumber(value: number)) ?? String(number)
        case .amount(let amount, let currency):
            guard let decimal = Decimal(string: amount, locale: Locale(identifier: "en_US_POSIX")), currency.count == 3
            else {
                return "\(currency) \(amount)".trimmingCharacters(in: .whitespaces)
            }
            let formatter = NumberFormatter()
            formatter.locale = locale
            formatter.numberStyle = .currency
            formatter.currencyCode = currency.uppercased()
            return formatter.string(from: decimal as NSDecimalNumber) ?? "\(currency) \(amount)"
        }
    }
}
