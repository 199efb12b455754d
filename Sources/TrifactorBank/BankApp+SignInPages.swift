import Foundation
import HTTP
import Sitekeys
import TrifactorKit
import WebUI

/// The pages of signing in: the email, the password under the sitekey, the
/// choice of second factor, the code, and the number to pick on a device.
extension BankApp {
    /// What the password page shows instead of a sitekey on a browser the bank does not recognise for the email.
    static let newBrowserSitekey =
        "This browser is new to us: your picture and phrase appear here after you sign in on it once."

    /// What "Sign in with my device" means, under its button.
    static let deviceExplained =
        "Your device is a phone or computer you linked to your account with the trifactor app (Settings says how). "
        + "It shows a number to pick, and you need no password."

    /// The first page: the email (a visitor's, or a session's when a sign-in was cancelled or failed).
    func emailPage(
        _ viewer: any Viewer, _ request: Request, email: String? = nil, error: String? = nil, notice: String? = nil
    ) -> HTML {
        if configuration.standard != nil {
            // The standard path: Trifactor's hosted sign-in asks for the password and the second factor, under the
            // customer's picture and phrase.
            return Page.layout(
                "Sign in", screen(viewer, request, notice: notice),
                [
                    Page.form(
                        "/signin/trifactor", viewer, class: "card stack",
                        [
                            Page.field(
                                "Email", name: "email", type: "email", value: email, error: error,
                                autocomplete: "username", required: false, autofocus: true),
                            Page.button("Sign in with Trifactor"),
                            Page.paragraph(
                                "You sign in at Trifactor, which keeps your password and second factors and comes "
                                    + "back here once you are signed in.", class: "hint"),
                        ]),
                    Page.paragraph("New here?"), Page.link("Open an account", "/open", class: "button secondary"),
                ])
        }
        let screen = screen(viewer, request, notice: notice, passkeys: true)
        var body: [HTML] = [
            Page.form(
                "/signin", viewer, class: "card stack",
                [
                    Page.field(
                        "Email", name: "email", type: "email", value: email, error: error,
                        autocomplete: "username webauthn", autofocus: true),
                    Page.button("Continue", name: "mode", value: "password"),
                    Page.button(
                        "Sign in with my device, no password", name: "mode", value: "device", kind: "secondary"),
                    Page.paragraph(Self.deviceExplained, class: "hint"),
                ])
        ]
        if screen.passkeys {
            body.append(
                .element(
                    "div", ["class": "card stack"],
                    [
                        Page.passkeyButton("Sign in with a passkey", flow: "passwordless"),
                        Page.paragraph(
                            "A passkey is Touch ID, Face ID, Windows Hello or a security key you added in Settings.",
                            class: "hint"),
                    ]))
        }
        body += [Page.paragraph("New here?"), Page.link("Open an account", "/open", class: "button secondary")]
        return Page.layout("Sign in", screen, body)
    }

    /// The password under the customer's sitekey, shown only on a browser recognised as this email's customer's;
    /// every other browser, and every address that banks nowhere here, sees one neutral page, the same to the byte.
    func passwordPage(
        _ session: BankSession, _ request: Request, email: String, error: String? = nil, notice: String? = nil
    ) -> HTML {
        let sitekey =
            (try? browsers.sitekey(cookie: KnownBrowsers.value(in: request.header("cookie")), email: email, now: now()))
            ?? nil
        let card: [HTML]
        if let sitekey {
            card = [
                .element(
                    "div", ["class": "card sitekey"],
                    [
                        .element(
                            "img",
                            ["src": SitekeyPictures.path(sitekey.picture), "alt": "Your picture: \(sitekey.picture)"]),
                        .element(
                            "div", [:],
                            [
                                Page.paragraph("Your picture and phrase:"),
                                .element("p", ["class": "phrase"], [.element("strong", [:], [.text(sitekey.phrase)])]),
                            ]),
                    ]),
                Page.paragraph("If this is not the picture and phrase you chose, do not enter your password."),
            ]
        } else {
            card = [.element("div", ["class": "card sitekey"], [Page.paragraph(Self.newBrowserSitekey)])]
        }
        return Page.layout(
            "Welcome back", screen(session, request, notice: notice),
            card + [
                Page.form(
                    "/signin/password", session, class: "card stack",
                    [
                        .element("p", [:], [.text("Signing in as "), .element("strong", [:], [.text(email)])]),
                        .element(
                            "input", ["type": "hidden", "name": "username", "value": email, "autocomplete": "username"]),
                        Page.field(
                            "Password", name: "password", type: "password", error: error,
                            autocomplete: "current-password", autofocus: true),
                        Page.button("Sign in"),
                    ]),
                Page.actions([Page.link("Forgot your password?", "/forgot"), Page.link("Not you? Start again", "/")]),
            ])
    }

    /// The number to pick on the device, large; the page refreshes until the device answers.
    func approvalPage(_ session: BankSession, _ request: Request, number: Int, cancel: String = "/signin/cancel")
        -> HTML
    {
        Page.layout(
            "Approve on your device", screen(session, request, refresh: 2),
            [
                .element(
                    "div", ["class": "card"],
                    [
                        Page.paragraph("Open trifactor on your device and pick this number:"),
                        .element("p", ["class": "number", "aria-live": "polite"], [.text(String(number))]),
                        Page.paragraph("This page moves on by itself once you approve.", class: "muted"),
                    ]),
                Page.form(cancel, session, [Page.button("Cancel", kind: "secondary")]),
            ])
    }

    func factorPage(_ session: BankSession, _ request: Request, _ resolver: SecondFactorResolver, notice: String?)
        -> HTML
    {
        let passkeysHere = Self.passkeysWork(request)
        let first = resolver.hints.first { passkeysHere || $0.kind != .passkey }?.id
        let options: [HTML] = resolver.hints.compactMap { hint in
            guard hint.kind != .passkey, let label = Self.factorChoice(hint) else { return nil }
            return Page.button(label, name: "factor", value: hint.id, kind: hint.id == first ? "primary" : "secondary")
        }
        let passkeyHints = resolver.hints.filter { $0.kind == .passkey }
        let passkeys: [HTML] =
            passkeysHere
            ? passkeyHints.map { hint in
                Page.passkeyButton(
                    Self.factorChoice(hint) ?? "", flow: "second-factor", factor: hint.id,
                    kind: hint.id == first ? "primary" : "secondary")
            } : []
        var body: [HTML] = [Page.paragraph("Choose how to confirm:")]
        body.append(
            .element("div", ["class": "card stack"], passkeys + [Page.form("/signin/challenge", session, options)]))
        if !passkeyHints.isEmpty && !passkeysHere { body.append(Page.paragraph(Self.passkeysNeedAName, class: "hint")) }
        body.append(Page.form("/signin/cancel", session, [Page.button("Start again", kind: "link")]))
        return Page.layout(
            "Confirm it's you", screen(session, request, notice: notice, passkeys: !passkeys.isEmpty), body)
    }

    /// A factor's button on a choice page ("Text me a code at +*****3456"); nil for a kind the bank cannot use.
    static func factorChoice(_ hint: FactorHint) -> String? {
        switch hint.kind {
        case .phone(let masked): "Text me a code at \(masked)"
        case .totp: "Use my authenticator app"
        case .device: "Approve on my device\(hint.displayName.map { " (\($0))" } ?? "")"
        case .recoveryCode: "Use a recovery code"
        case .passkey: "Use Touch ID / Face ID / your security key"
        case .other: nil
        }
    }

    /// Why a page offers no passkey at an IP address.
    static let passkeysNeedAName =
        "Passkeys work only when the bank is opened at its name (like localhost), not at a numeric address."

    func codePage(
        _ session: BankSession, _ request: Request, _ code: CodeChallenge, error: String?, notice: String? = nil
    ) -> HTML {
        let hint = code.hint
        let (title, hintText): (String, String)
        switch hint.kind {
        case .phone(let masked):
            (title, hintText) = (
                "Enter the code we sent",
                "We sent a 6-digit code to \(masked). If the text does not arrive, we call you and read it out."
            )
        case .recoveryCode: (title, hintText) = ("Enter a recovery code", "Each recovery code works once.")
        default:
            (title, hintText) = (
                "Enter the code from your app",
                "Open your authenticator app and type the 6-digit code for Trifactor Bank."
            )
        }
        let usedUp = code.isTexted && code.wrongTries >= Self.textedCodeTries
        var body: [HTML] = [Page.paragraph(hintText)]
        if usedUp {
            body.append(
                .element(
                    "p", ["class": "error", "role": "alert"],
                    [.text(error ?? "That code no longer works: send a new code.")]))
        } else {
            body.append(
                Page.form(
                    "/signin/code", session, class: "card stack",
                    [
                        Page.field(
                            hint.kind == .recoveryCode ? "Recovery code" : "Code", name: "code", error: error,
                            autocomplete: "one-time-code",
                            inputmode: hint.kind == .recoveryCode ? nil : "numeric", autofocus: true),
                        Page.button("Confirm"),
                    ]))
        }
        var actions: [HTML] = []
        if code.isTexted {
            actions.append(
                Page.form(
                    "/signin/resend", session, [Page.button("Send a new code", kind: usedUp ? "primary" : "secondary")])
            )
            if !usedUp {
                actions.append(Page.form("/signin/call", session, [Page.button("Call me instead", kind: "secondary")]))
            }
        }
        actions.append(Page.link("Use another way", "/signin/factor"))
        actions.append(Page.form("/signin/cancel", session, [Page.button("Start again", kind: "link")]))
        return Page.layout(title, screen(session, request, notice: notice), body + [Page.actions(actions)])
    }
}
