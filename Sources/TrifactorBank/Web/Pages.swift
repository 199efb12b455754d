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
enum Page: Components {
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
}
