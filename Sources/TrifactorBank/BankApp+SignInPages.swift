import Foundation
import HTTP
import TrifactorKit

/// The pages of signing in: the email, the password under the sitekey, the
/// choice of second factor, the code, and the number to pick on a device.
extension BankApp {
    /// What the password page shows instead of a sitekey on a browser the bank does not recognise for the email.
    static let newBrowserSitekey = "This browser is new to us: your picture and phrase appear here after you sign in on it once."

    /// The first page: the email (a visitor's, or a session's when a sign-in was cancelled or failed).
    func emailPage(_ session: any Viewer, email: String? = nil, error: String? = nil, notice: String? = nil) -> HTML {
        Page.layout("Sign in", session: session, devPhone: configuration.devPhone, notice: notice, passkeys: true, [
            Page.form("/signin", session, [
                Page.field("Email", name: "email", type: "email", value: email, error: error, autocomplete: "username", autofocus: true),
                Page.button("Continue", name: "mode", value: "password"),
                Page.button("Sign in with my device, no password", name: "mode", value: "device", kind: "secondary"),
            ]),
            Page.passkeyButton("Sign in with a passkey", flow: "passwordless"),
            Page.paragraph("New here?"), Page.link("Open an account", "/open"),
        ])
    }

    /// The password under the customer's sitekey, shown only on a browser recognised as this email's customer's;
    /// every other browser, and every address that banks nowhere here, sees one neutral page, the same to the byte.
    func passwordPage(_ session: BankSession, email: String, request: Request, error: String? = nil) -> HTML {
        let sitekey = (try? browsers.sitekey(cookie: KnownBrowsers.value(in: request.header("cookie")), email: email, now: now())) ?? nil
        let card: [HTML]
        if let sitekey {
            card = [
                .element("div", ["class": "card sitekey"], [
                    .element("img", ["src": "/sitekeys/\(sitekey.picture).svg", "alt": "Your picture: \(sitekey.picture)"]),
                    .element("div", [:], [Page.paragraph("Your picture and phrase:"), .element("p", ["class": "phrase"], [.element("strong", [:], [.text(sitekey.phrase)])])]),
                ]),
                Page.paragraph("If this is not the picture and phrase you chose, do not enter your password."),
            ]
        } else {
            card = [.element("div", ["class": "card sitekey"], [Page.paragraph(Self.newBrowserSitekey)])]
        }
        return Page.layout("Welcome back", session: session, devPhone: configuration.devPhone, card + [
            Page.form("/signin/password", session, [
                .element("input", ["type": "hidden", "name": "username", "value": email, "autocomplete": "username"]),
                Page.field("Password", name: "password", type: "password", error: error, autocomplete: "current-password", autofocus: true),
                Page.button("Sign in"),
            ]),
            Page.link("Not you? Start again", "/"),
        ])
    }

    /// The number to pick on the device, large; the page refreshes until the device answers.
    func approvalPage(_ session: BankSession, number: Int) -> HTML {
        Page.layout("Approve on your device", session: session, devPhone: configuration.devPhone, refresh: 2, [
            Page.paragraph("Open trifactor on your device and pick this number:"),
            .element("p", ["class": "number", "aria-live": "polite"], [.text(String(number))]),
            Page.paragraph("This page moves on by itself once you approve."),
            Page.form("/signin/cancel", session, [Page.button("Cancel", kind: "secondary")]),
        ])
    }

    func factorPage(_ session: BankSession, _ resolver: SecondFactorResolver, notice: String?) -> HTML {
        let options: [HTML] = resolver.hints.compactMap { hint in
            let label: String
            switch hint.kind {
            case .phone(let masked): label = "Text me a code at \(masked)"
            case .totp: label = "Use my authenticator app"
            case .device: label = "Approve on my device\(hint.displayName.map { " (\($0))" } ?? "")"
            case .recoveryCode: label = "Use a recovery code"
            case .passkey: return nil
            case .other: return nil
            }
            return Page.button(label, name: "factor", value: hint.id, kind: hint.id == resolver.hints.first?.id ? "primary" : "secondary")
        }
        let passkeys: [HTML] = resolver.hints.filter { $0.kind == .passkey }.map { hint in
            Page.passkeyButton("Use Touch ID / Face ID / your security key", flow: "second-factor", factor: hint.id,
                               kind: hint.id == resolver.hints.first?.id ? "primary" : "secondary")
        }
        return Page.layout("Confirm it's you", session: session, devPhone: configuration.devPhone, notice: notice, passkeys: !passkeys.isEmpty, [
            Page.paragraph("Choose how to confirm:"),
        ] + passkeys + [
            Page.form("/signin/challenge", session, options),
            Page.form("/signin/cancel", session, [Page.button("Cancel", kind: "link")]),
        ])
    }

    func codePage(_ session: BankSession, _ hint: FactorHint, error: String?, notice: String? = nil) -> HTML {
        let (title, hintText): (String, String)
        switch hint.kind {
        case .phone(let masked): (title, hintText) = ("Enter the code we sent", "We sent a 6-digit code to \(masked). If the text does not arrive, we call you and read it out.")
        case .recoveryCode: (title, hintText) = ("Enter a recovery code", "Each recovery code works once.")
        default: (title, hintText) = ("Enter the code from your app", "Open your authenticator app and type the 6-digit code for Trifactor Bank.")
        }
        var call: [HTML] = []
        if case .phone = hint.kind { call = [Page.form("/signin/call", session, [Page.button("Call me instead", kind: "secondary")])] }
        return Page.layout(title, session: session, devPhone: configuration.devPhone, notice: notice, [
            Page.paragraph(hintText),
            Page.form("/signin/code", session, [
                Page.field(hint.kind == .recoveryCode ? "Recovery code" : "Code", name: "code", value: nil, error: error, autocomplete: "one-time-code",
                           inputmode: hint.kind == .recoveryCode ? nil : "numeric", autofocus: true),
                Page.button("Confirm"),
            ]),
        ] + call + [
            Page.link("Use another way", "/signin/factor"),
            Page.form("/signin/cancel", session, [Page.button("Cancel", kind: "link")]),
        ])
    }
}

