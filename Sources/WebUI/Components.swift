import Foundation

/// The pieces every page is built from, for any page enum that adopts this
/// protocol (the bank's `Page`, the hosted sign-in's `HostedPage`): labelled
/// inputs with their hint and error announced next to them, buttons named
/// for what they do, cards and links. All of them escape what they are given.
package protocol Components {}

extension Components {
    /// A hidden field.
    package static func hidden(_ name: String, _ value: String) -> HTML {
        .element("input", ["type": "hidden", "name": name, "value": value])
    }

    /// A labelled input with its hint and its error (if any) announced next to it.
    package static func field(
        _ label: String, name: String, type: String = "text", value: String? = nil, error: String? = nil,
        hint: String? = nil,
        autocomplete: String? = nil, inputmode: String? = nil, required: Bool = true, autofocus: Bool = false,
        maxlength: Int? = nil, id given: String? = nil
    ) -> HTML {
        // One id per input: a page with several forms of the same field (one per factor) names each its own.
        let id = given ?? "f-\(name)"
        let described = [hint.map { _ in "\(id)-hint" }, error.map { _ in "\(id)-error" }].compactMap { $0 }
        var children: [HTML] = [.element("label", ["for": id], [.text(label)])]
        if let hint { children.append(.element("p", ["id": "\(id)-hint", "class": "hint"], [.text(hint)])) }
        children.append(
            .element(
                "input",
                [
                    "id": id, "name": name, "type": type, "value": value, "autocomplete": autocomplete,
                    "inputmode": inputmode,
                    "required": required ? "" : nil, "autofocus": autofocus || error != nil ? "" : nil,
                    "maxlength": maxlength.map(String.init), "aria-invalid": error == nil ? nil : "true",
                    "aria-describedby": described.isEmpty ? nil : described.joined(separator: " "),
                    // An address, a phone number or a code reads left to right on a right-to-left page too.
                    "dir": ["email", "tel", "url"].contains(type) || autocomplete == "one-time-code"
                        || inputmode == "numeric" ? "ltr" : nil,
                ]))
        if let error {
            children.append(.element("p", ["id": "\(id)-error", "class": "error", "role": "alert"], [.text(error)]))
        }
        return .element("div", ["class": "field"], children)
    }

    package static func select(
        _ label: String, name: String, options: [(value: String, label: String)], selected: String? = nil,
        error: String? = nil
    ) -> HTML {
        let id = "f-\(name)"
        var children: [HTML] = [
            .element("label", ["for": id], [.text(label)]),
            .element(
                "select",
                [
                    "id": id, "name": name, "aria-invalid": error == nil ? nil : "true",
                    "aria-describedby": error == nil ? nil : "\(id)-error",
                ],
                options.map {
                    .element(
                        "option", ["value": $0.value, "selected": $0.value == selected ? "" : nil], [.text($0.label)])
                }),
        ]
        if let error {
            children.append(.element("p", ["id": "\(id)-error", "class": "error", "role": "alert"], [.text(error)]))
        }
        return .element("div", ["class": "field"], children)
    }

    /// A group of radio buttons under `legend` (the first checked unless `selected` names one): each label wraps, where a
    /// select would cut it off on a phone.
    package static func radios(
        _ legend: String, name: String, options: [(value: String, label: String)], selected: String? = nil
    ) -> HTML {
        let checked = options.contains { $0.value == selected } ? selected : options.first?.value
        return .element(
            "fieldset", ["class": "choices"],
            [.element("legend", [:], [.text(legend)])]
                + options.map { option in
                    .element(
                        "label", [:],
                        [
                            .element(
                                "input",
                                [
                                    "type": "radio", "name": name, "value": option.value,
                                    "checked": option.value == checked ? "" : nil,
                                ]),
                            .element("span", [:], [.text(option.label)]),
                        ])
                })
    }

    package static func button(_ label: String, name: String? = nil, value: String? = nil, kind: String = "primary")
        -> HTML
    {
        .element("button", ["type": "submit", "name": name, "value": value, "class": kind], [.text(label)])
    }

    /// A button the passkey script drives (`data-passkey` names the ceremony).
    package static func passkeyButton(_ label: String, flow: String, factor: String? = nil, kind: String = "secondary")
        -> HTML
    {
        .element(
            "button", ["type": "button", "class": kind, "data-passkey": flow, "data-factor": factor], [.text(label)])
    }

    package static func link(_ label: String, _ href: String, class name: String? = nil) -> HTML {
        .element("a", ["href": href, "class": name], [.text(label)])
    }

    package static func paragraph(_ text: String, class name: String? = nil) -> HTML {
        .element("p", ["class": name], [.text(text)])
    }

    /// A white card (a section with its heading when `heading` is given).
    package static func card(_ heading: String? = nil, id: String? = nil, class name: String? = nil, _ children: [HTML])
        -> HTML
    {
        guard let heading else {
            return .element("div", ["class": ["card", name].compactMap { $0 }.joined(separator: " ")], children)
        }
        let headingID =
            "h-\(id ?? String(heading.lowercased().filter { $0.isLetter || $0 == " " }.replacingOccurrences(of: " ", with: "-")))"
        return .element(
            "section",
            [
                "class": ["card", name].compactMap { $0 }.joined(separator: " "), "aria-labelledby": headingID,
                "id": id,
            ],
            [
                .element("h2", ["id": headingID], [.text(heading)])
            ] + children)
    }

    /// Buttons and links side by side (stacked on a phone).
    package static func actions(_ children: [HTML]) -> HTML { .element("div", ["class": "actions"], children) }
}
