import WebUI

/// The console's pieces inside the hosted layout: sections, tables and summaries. No page shell of its own: every
/// page goes through `HostedPage.layout` (`ConsoleRoutes.render`).
enum ConsolePage: Components {
    /// A section with its heading.
    static func section(_ heading: String, id: String, _ children: [HTML]) -> HTML {
        .element(
            "section", ["aria-labelledby": "h-\(id)", "id": id, "class": "console-section"],
            [.element("h2", ["id": "h-\(id)"], [.text(heading)])] + children)
    }

    /// A table with a header row, named `caption` for screen readers (the section's heading shows it); scrolls sideways on a phone instead of widening the page. `empty`: the sentence
    /// shown instead when there are no rows.
    static func table(_ caption: String, _ headers: [String], _ rows: [[HTML]], empty: String) -> HTML {
        guard !rows.isEmpty else { return paragraph(empty) }
        return .element(
            "div", ["class": "scroll", "role": "region", "aria-label": caption, "tabindex": "0"],
            [
                .element(
                    "table", [:],
                    [
                        .element(
                            "thead", [:],
                            [.element("tr", [:], headers.map { .element("th", ["scope": "col"], [.text($0)]) })]),
                        .element(
                            "tbody", [:], rows.map { .element("tr", [:], $0.map { .element("td", [:], [$0]) }) }),
                    ])
            ])
    }

    /// Terms and their values.
    static func summary(_ pairs: [(String, String)]) -> HTML {
        .element(
            "dl", ["class": "summary"],
            pairs.flatMap { [HTML.element("dt", [:], [.text($0.0)]), .element("dd", [:], [.text($0.1)])] })
    }

    /// A secret shown once (a client's new secret), in a box of its own, left to right.
    static func secret(_ value: String) -> HTML {
        .element("p", ["class": "secret"], [.element("code", ["dir": "ltr", "id": "secret"], [.text(value)])])
    }

    /// Text in a table cell.
    static func cell(_ text: String) -> HTML { .text(text) }

    /// A GET form (a search, a filter): no token, nothing changes.
    static func search(_ action: String, _ children: [HTML]) -> HTML {
        .element("form", ["method": "get", "action": action, "role": "search"], children)
    }

    /// A POST form of the console, with its CSRF token.
    static func form(_ action: String, csrf: String, _ children: [HTML]) -> HTML {
        .element("form", ["method": "post", "action": action], [hidden("csrf", csrf)] + children)
    }
}
