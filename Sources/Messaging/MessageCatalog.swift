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
    package static let bundled: MessageCatalog = load(
        (Bundle.module.resourceURL?.appendingPathComponent("Templates") ?? URL(fileURLWithPath: "Templates")).path)

    /// A catalog of one JSON file per language in the folder at `path` (the hosted pages keep theirs in the
    /// server's resources).
    package static func load(_ path: String) -> MessageCatalog {
        let folder = URL(fileURLWithPath: path)
        var languages: [String: Language] = [:]
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
        precondition(languages["en"] != nil, "the English texts of \(folder.lastPathComponent) are missing")
        return MessageCatalog(languages: languages, fallback: "en")
    }

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

    /// The first of `preferences` (BCP 47 tags, most wanted first) the catalog has, or nil.
    package func language(preferring preferences: [String]) -> String? {
        preferences.lazy.compactMap { language(of: $0) }.first
    }

    /// The tags of an `Accept-Language` header (RFC 9110 §12.5.4), most wanted first: by weight, then in the
    /// order written; `*` and tags of weight 0 left out. At most 20 entries are read.
    package static func preferences(acceptLanguage header: String?) -> [String] {
        guard let header else { return [] }
        var weighted: [(tag: String, weight: Double, index: Int)] = []
        for (index, entry) in header.split(separator: ",").prefix(20).enumerated() {
            let parts = entry.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = parts.first, !tag.isEmpty, tag != "*", tag.count <= 35 else { continue }
            var weight = 1.0
            for parameter in parts.dropFirst() where parameter.lowercased().hasPrefix("q=") {
                weight = Double(parameter.dropFirst(2)) ?? 0
            }
            if weight > 0 { weighted.append((tag, min(weight, 1), index)) }
        }
        return weighted.sorted { $0.weight != $1.weight ? $0.weight > $1.weight : $0.index < $1.index }.map(\.tag)
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
        let locale = Locale(identifier: localeIdentifier(chosen.language))
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

    /// The locale numbers, amounts and durations of `language` are written in (`de_DE`).
    package func localeIdentifier(_ language: String) -> String {
        (languages[language] ?? languages[fallback]!).voice.replacingOccurrences(of: "-", with: "_")
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
            return Self.amount(amount, currency: currency, locale: locale.identifier)
        }
    }

    /// An amount (a decimal string such as `1234.50`) in `currency` (ISO 4217) as `locale` (`de_DE`) writes money: the one
    /// formatter of amounts, for messages and pages alike. Anything that is not a decimal and a code is written as
    /// given, code first.
    package static func amount(_ amount: String, currency: String, locale: String) -> String {
        guard let decimal = Decimal(string: amount, locale: Locale(identifier: "en_US_POSIX")), currency.count == 3
        else {
            return "\(currency) \(amount)".trimmingCharacters(in: .whitespaces)
        }
        let formatter = NumberFormatter()
        formatter.locale = Locale(identifier: locale)
        formatter.numberStyle = .currency
        formatter.currencyCode = currency.uppercased()
        return formatter.string(from: decimal as NSDecimalNumber) ?? "\(currency) \(amount)"
    }
}
