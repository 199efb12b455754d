/// Server-rendered HTML that escapes by default: text and attribute values
/// are always escaped; only `HTML.trusted` (our own constant markup) is not.
package struct HTML: Sendable, CustomStringConvertible {
    /// The rendered markup.
    package let rendered: String

    private init(rendered: String) { self.rendered = rendered }

    package var description: String { rendered }

    /// Text, escaped (`<`, `>`, `&`, `"`, `'`).
    package static func text(_ value: String) -> HTML { HTML(rendered: escape(value)) }

    /// Markup written in this program, never built from input.
    package static func trusted(_ markup: StaticString) -> HTML { HTML(rendered: markup.description) }

    /// Nothing.
    package static let empty = HTML(rendered: "")

    /// An element with escaped attribute values (nil drops the attribute, "" makes it a bare boolean attribute) and children.
    package static func element(
        _ name: StaticString, _ attributes: KeyValuePairs<String, String?> = [:], _ children: [HTML] = []
    ) -> HTML {
        var out = "<\(name)"
        for (key, value) in attributes {
            guard let value else { continue }
            precondition(key.allSatisfy { $0.isLetter || $0 == "-" }, "attribute names are constants")
            out += value.isEmpty ? " \(key)" : " \(key)=\"\(escape(value))\""
        }
        out += ">"
        if voidElements.contains(name.description) { return HTML(rendered: out) }
        for child in children { out += child.rendered }
        out += "</\(name)>"
        return HTML(rendered: out)
    }

    /// Children one after another.
    package static func group(_ children: [HTML]) -> HTML { HTML(rendered: children.map(\.rendered).joined()) }

    /// A whole page.
    package static func document(
        _ head: [HTML], _ body: [HTML], language: String = "en", rightToLeft: Bool = false,
        bodyAttributes: KeyValuePairs<String, String?> = [:]
    ) -> HTML {
        HTML(
            rendered: "<!doctype html>"
                + element(
                    "html", ["lang": language, "dir": rightToLeft ? "rtl" : nil],
                    [element("head", [:], head), element("body", bodyAttributes, body)]
                )
                .rendered)
    }

    static let voidElements: Set<String> = ["br", "hr", "img", "input", "link", "meta"]

    static func escape(_ value: String) -> String {
        var out = ""
        out.reserveCapacity(value.utf8.count)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "&": out += "&amp;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\u{0}": out += "\u{FFFD}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

extension HTML: ExpressibleByStringLiteral {
    /// A string literal is text: escaped like any other.
    package init(stringLiteral value: String) { self = .text(value) }
}
