import Foundation
import WebUI

/// How a page is framed: for whom, under which tab of the navigation,
/// with which scripts, and whether passkeys can work at this address.
struct Screen: Sendable {
    /// A tab of the signed-in navigation.
    enum Tab: String, Sendable { case accounts, transfer, settings }

    /// Whom the page is for (its forms carry the viewer's token); nil for a page without forms.
    var viewer: (any Viewer)?
    /// The dev phone, linked in the footer in dev mode.
    var devPhone: URL?
    /// The tab the page belongs to (`aria-current`).
    var tab: Tab?
    /// A one-time message at the top.
    var notice: String?
    /// Balances hide after this many idle seconds (the bank script's timer): pages that show money.
    var idle: TimeInterval?
    /// Reload after this many seconds (a page that waits for a device).
    var refresh: Int?
    /// The page has passkey buttons and passkeys can work here: loads the passkey script and its token.
    var passkeys = false
}

/// The bank's pages: one layout, labelled fields with their errors announced
/// next to them, buttons named for what they do. No inline script or style:
/// the stylesheet (`Style.css`), the bank script (`BankScript.source`) and
/// the passkey script are files the bank serves.
enum Page {
    static func layout(_ title: String, _ screen: Screen, _ body: [HTML]) -> HTML {
        var head: [HTML] = [
            .element("meta", ["charset": "utf-8"]),
            .element("meta", ["name": "viewport", "content": "width=device-width, initial-scale=1"]),
            .element("title", [:], [.text("\(title) · Trifactor Bank")]),
            .element("link", ["rel": "icon", "href": "/static/logo.svg", "type": "image/svg+xml"]),
            .element("link", ["rel": "stylesheet", "href": "/static/bank.css"]),
            .element("script", ["src": "/static/bank.js", "defer": ""]),
        ]
        if let refresh = screen.refresh {
            head.append(.element("meta", ["http-equiv": "refresh", "content": String(refresh)]))
        }
        if screen.passkeys, let viewer = screen.viewer {
            head.append(.element("meta", ["name": "csrf-token", "content": viewer.csrf]))
            head.append(.element("script", ["src": "/static/passkey.js", "defer": ""]))
        }
        var main: [HTML] = [.element("h1", ["id": "title", "tabindex": "-1"], [.text(title)])]
        if let notice = screen.notice {
            main.append(.element("p", ["class": "notice", "role": "status"], [.text(notice)]))
        }
        if screen.passkeys {
            main.append(
                .element(
                    "p", ["id": "passkey-error", "class": "error", "role": "alert", "tabindex": "-1", "hidden": ""]))
        }
        main += body
        let signedIn = screen.viewer?.isSignedIn == true
        return .document(
            head,
            [
                .element("a", ["class": "skip", "href": "#main"], ["Skip to the page"]),
                header(screen, signedIn: signedIn),
                .element("main", ["id": "main"], main),
                footer(screen),
            ],
            bodyAttributes: ["data-idle": screen.idle.map { String(Int($0)) }, "class": signedIn ? "signed-in" : nil])
    }

    /// The bar: the logo and name, then for a customer the tabs (a bottom bar on a phone) and "Sign out".
    static func header(_ screen: Screen, signedIn: Bool) -> HTML {
        var bar: [HTML] = [
            .element(
                "a", ["href": signedIn ? "/accounts" : "/", "class": "brand"],
                [
                    .element("img", ["src": "/static/logo.svg", "alt": "", "width": "32", "height": "32"]),
                    .element("span", [:], ["Trifactor Bank"]),
                ])
        ]
        if signedIn, let viewer = screen.viewer {
            let tabs: [(Screen.Tab, String, String)] = [
                (.accounts, "Accounts", "/accounts"), (.transfer, "Transfer", "/transfer"),
                (.settings, "Settings", "/settings"),
            ]
            bar.append(
                .element(
                    "nav", ["aria-label": "Main", "class": "tabs"],
                    tabs.map { tab, label, href in
                        .element(
                            "a",
                            [
                                "href": href, "class": "tab tab-\(tab.rawValue)",
                                "aria-current": screen.tab == tab ? "page" : nil,
                            ],
                            [
                                .element("span", ["class": "icon", "aria-hidden": "true"]),
                                .element("span", [:], [.text(label)]),
                            ])
                    }))
            bar.append(form("/signout", viewer, [button("Sign out", kind: "link signout")]))
        }
        return .element("header", ["class": "top"], [.element("div", ["class": "bar"], bar)])
    }

    static func footer(_ screen: Screen) -> HTML {
        var items: [HTML] = [.element("span", [:], ["Trifactor Bank is a demo: its money is not real."])]
        if let devPhone = screen.devPhone {
            items.append(
                .element(
                    "a", ["href": devPhone.absoluteString, "target": "_blank", "rel": "noopener"],
                    ["Dev phone (opens a new tab)"]))
        }
        return .element("footer", [:], items)
    }

    /// A POST form with the viewer's CSRF token.
    static func form(_ action: String, _ viewer: any Viewer, class name: String? = nil, _ children: [HTML]) -> HTML {
        .element(
            "form", ["method": "post", "action": action, "class": name],
            [.element("input", ["type": "hidden", "name": CSRF.field, "value": viewer.csrf])] + children)
    }

    /// A hidden field.
    static func hidden(_ name: String, _ value: String) -> HTML {
        .element("input", ["type": "hidden", "name": name, "value": value])
    }

    /// A labelled input with its hint and its error (if any) announced next to it.
    static func field(
        _ label: String, name: String, type: String = "text", value: String? = nil, error: String? = nil,
        hint: String? = nil,
        autocomplete: String? = nil, inputmode: String? = nil, required: Bool = true, autofocus: Bool = false,
        maxlength: Int? = nil
    ) -> HTML {
        let id = "f-\(name)"
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
                ]))
        if let error {
            children.append(.element("p", ["id": "\(id)-error", "class": "error", "role": "alert"], [.text(error)]))
        }
        return .element("div", ["class": "field"], children)
    }

    static func select(
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
    static func radios(
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

    static func button(_ label: String, name: String? = nil, value: String? = nil, kind: String = "primary") -> HTML {
        .element("button", ["type": "submit", "name": name, "value": value, "class": kind], [.text(label)])
    }

    /// A button the passkey script drives (`data-passkey` names the ceremony).
    static func passkeyButton(_ label: String, flow: String, factor: String? = nil, kind: String = "secondary") -> HTML
    {
        .element(
            "button", ["type": "button", "class": kind, "data-passkey": flow, "data-factor": factor], [.text(label)])
    }

    static func link(_ label: String, _ href: String, class name: String? = nil) -> HTML {
        .element("a", ["href": href, "class": name], [.text(label)])
    }

    static func paragraph(_ text: String, class name: String? = nil) -> HTML {
        .element("p", ["class": name], [.text(text)])
    }

    /// A white card (a section with its heading when `heading` is given).
    static func card(_ heading: String? = nil, id: String? = nil, class name: String? = nil, _ children: [HTML]) -> HTML
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
    static func actions(_ children: [HTML]) -> HTML { .element("div", ["class": "actions"], children) }
}
