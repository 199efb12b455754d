import Crypto
import Foundation
import HTTP
import WebUI

/// The hosted sign-in's pages: one layout on the shared stylesheet, the
/// client's name (and logo) on every page so the user knows where they are
/// signing in, forms that carry the flow and its CSRF token. No inline
/// script or style: the Content-Security-Policy forbids both.
enum HostedPage: Components {
    /// What a page needs to frame itself.
    struct Frame: Sendable {
        /// The page's language.
        var text: HostedText
        /// The relying party, when known (not on the error page of an unknown client).
        var clientName: String?
        var logoURI: String?
        /// The server's own name (`TRIFACTOR_TOTP_ISSUER`).
        var brand: String
        /// The flow its forms continue, and their CSRF token.
        var flowID: String?
        var csrf: String?
        /// Where a form may also be sent: the client's redirect URI (for form_post and redirects after a POST).
        var formTarget: String?
        /// The page loads the hosted script (form post, passkeys).
        var script = false
        /// The footer's sentence, when not the sign-in's ("You are signing in to …").
        var footer: String?
        /// The page uses the whole width (the operator's console's tables), not the sign-in's narrow card.
        var wide = false
    }

    static let stylesheet = "/authorize/static/trifactor.css"
    static let script = "/authorize/static/hosted.js"
    /// The script's version in its address: a browser that kept the script of an earlier release (it is cached for
    /// 5 minutes) loads this one with the pages that need it.
    static let scriptVersion = String(SHA256.hex(HostedScript.source).prefix(12))

    static func layout(_ title: String, _ frame: Frame, notice: String? = nil, _ body: [HTML]) -> HTML {
        var head: [HTML] = [
            .element("meta", ["charset": "utf-8"]),
            .element("meta", ["name": "viewport", "content": "width=device-width, initial-scale=1"]),
            .element("meta", ["name": "referrer", "content": "no-referrer"]),
            .element("title", [:], [.text("\(title) · \(frame.clientName ?? frame.brand)")]),
            .element("link", ["rel": "stylesheet", "href": stylesheet]),
        ]
        if frame.script { head.append(.element("script", ["src": script + "?v=" + scriptVersion, "defer": ""])) }
        var brand: [HTML] = []
        if let logo = frame.logoURI {
            brand.append(.element("img", ["src": logo, "alt": "", "width": "32", "height": "32"]))
        }
        brand.append(.element("span", [:], [.text(frame.clientName ?? frame.brand)]))
        let t = frame.text
        var main: [HTML] = [.element("h1", ["id": "title", "tabindex": "-1"], [.text(title)])]
        if let notice { main.append(.element("p", ["class": "notice", "role": "status"], [.text(notice)])) }
        main += body
        let footer =
            frame.footer
            ?? frame.clientName.flatMap {
                // Trifactor's own pages sign in under its own name: "signing in to Trifactor with Trifactor" is noise.
                $0 == frame.brand ? nil : t("footer.signing_in", ["client": $0, "brand": frame.brand])
            }
            ?? t("footer.sign_in", ["brand": frame.brand])
        return .document(
            head,
            [
                .element("a", ["class": "skip", "href": "#main"], [.text(t("layout.skip"))]),
                .element(
                    "header", ["class": "top"],
                    [.element("div", ["class": "bar"], [.element("span", ["class": "brand"], brand)])]),
                .element(
                    "main", ["id": "main"], [.element("div", ["class": frame.wide ? "card" : "card narrow"], main)]),
                .element("footer", [:], [.element("span", [:], [.text(footer)])]),
            ], language: t.language, rightToLeft: t.isRightToLeft)
    }

    /// What makes a page wait for the user's device: with script, the hosted script asks the same address every
    /// 2 seconds (header `X-Trifactor-Wait`, answered 204 while nothing changed) and reloads only once something did,
    /// so focus and the screen reader's place stay put while the user looks at their device; without script, the page
    /// reloads itself every 2 seconds.
    static func waitsForDevice() -> HTML {
        .element(
            "div", ["data-wait": "", "hidden": ""],
            [.element("noscript", [:], [.element("meta", ["http-equiv": "refresh", "content": "2"])])])
    }

    /// Whether `request` is the hosted script asking whether a waiting page changed.
    static func isWaitPoll(_ request: Request) -> Bool { request.header("x-trifactor-wait") == "1" }

    /// A POST form that continues the flow, with its CSRF token.
    static func form(_ action: String, _ frame: Frame, _ children: [HTML]) -> HTML {
        .element(
            "form", ["method": "post", "action": action],
            [hidden("flow", frame.flowID ?? ""), hidden("csrf", frame.csrf ?? "")] + children)
    }

    /// The page as a response, under a strict policy.
    static func response(_ page: HTML, _ frame: Frame, status: Int = 200, headers: [(name: String, value: String)] = [])
        -> Response
    {
        var response = Response.html(page.rendered, status: status)
        response.headers += securityHeaders(formTarget: frame.formTarget) + headers
        return response
    }

    /// CSP without inline script or style (the HTTP layer adds no-store, nosniff, no-referrer and DENY to every
    /// answer).
    static func securityHeaders(formTarget: String?) -> [(name: String, value: String)] {
        // CSP3 form-action also governs the redirects that follow a form's POST: the client's origin must be listed.
        let target = formTarget.flatMap(formSource).map { " \($0)" } ?? ""
        return [
            (
                "Content-Security-Policy",
                "default-src 'none'; style-src 'self'; img-src 'self' https: data:; script-src 'self'; connect-src 'self'; form-action 'self'\(target); frame-ancestors 'none'; base-uri 'none'"
            )
        ]
    }

    /// `scheme://host[:port]` of a URI, for CSP; nil for a private-use scheme (native apps are not form targets).
    static func origin(_ uri: String) -> String? {
        guard let parts = URLComponents(string: uri), let scheme = parts.scheme, scheme == "https" || scheme == "http",
            let host = parts.host
        else { return nil }
        // An IPv6 literal keeps (or gets) its brackets, once.
        let shownHost = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "\(scheme)://\(shownHost)\(parts.port.map { ":\($0)" } ?? "")"
    }

    /// The CSP source that lets a form's redirect reach `uri`: its origin, or its scheme for a native app's
    /// private-use scheme (`com.example.app:`).
    static func formSource(_ uri: String) -> String? {
        if let origin = origin(uri) { return origin }
        guard let scheme = URLComponents(string: uri)?.scheme?.lowercased(), scheme.contains("."),
            scheme.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == "+" })
        else { return nil }
        return scheme + ":"
    }

    /// A device in a sentence: "your device “Ann's iPhone”", or "your device" when it has no name; a bare name
    /// ("We will ask laptop") does not read as a device.
    static func device(_ name: String?, _ t: HostedText) -> String {
        name.map { t("common.your_named_device", ["name": $0]) } ?? t("common.your_device")
    }

    /// What each scope lets the client see, in the user's words; a scope of the client's own is named as it is.
    static func describe(scope: String, _ t: HostedText) -> String {
        switch scope {
        case "openid", "profile", "email", "phone", "offline_access": t("scope.\(scope)")
        default: t("scope.other", ["scope": scope])
        }
    }
}
