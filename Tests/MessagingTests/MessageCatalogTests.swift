import Messaging
import MessagingTestSupport
import Testing

@Suite("Messages in many languages")
struct MessageCatalogTests {
    static let catalog = MessageFixtures.catalog
    static let required = MessageFixtures.languages

    static func placeholders(_ text: String) -> [String] {
        var found: [String] = []
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            found.append(String(rest[rest.index(after: open)..<close]))
            rest = rest[rest.index(after: close)...]
        }
        return found.sorted()
    }

    @Test("every language has every message, with exactly the placeholders of the English one")
    func complete() throws {
        let english = try #require(Self.catalog.languages["en"])
        for code in Self.required {
            let language = try #require(Self.catalog.languages[code], "no \(code).json")
            #expect(Set(language.messages.keys) == Set(english.messages.keys), "\(code): keys differ")
            for (key, text) in english.messages {
                let translated = try #require(language.messages[key], "\(code) has no \(key)")
                #expect(Self.placeholders(translated) == Self.placeholders(text), "\(code) \(key): \(translated)")
            }
            #expect(language.direction == (["ar", "fa"].contains(code) ? "rtl" : "ltr"))
        }
    }
}
