import Foundation
import HTTP
import TrifactorKit
import WebUI

/// The pages of resetting a forgotten password: the email, its code, the
/// choice of second factor, the new password (with the code when the factor
/// is one), and the passkey's confirmation.
extension BankApp {
    func forgotPage(_ viewer: any Viewer, _ request: Request, email: String?, error: String?, notice: String?) -> HTML {
        Page.layout(
            "Reset your password", screen(viewer, request, notice: notice),
            [
                Page.paragraph(
                    "Enter the email you bank with. We email you a code, then you confirm with your phone, app or device as when you sign in."
                ),
                Page.form(
                    "/forgot", viewer, class: "card stack",
                    [
                        Page.field(
                            "Email", name: "email", type: "email", value: email, error: error, autocomplete: "username",
                            autofocus: true),
                        Page.button("Email me a code"),
                    ]),
                Page.link("Back to sign in", "/"),
            ])
    }

    func resetCodePage(
        _ session: BankSession, _ request: Request, _ flow: ResetFlow, tries: EmailTries, error: String?,
        notice: String?
    ) -> HTML {
        let usedUp = tries.tries >= Self.emailCodeTries
        var body: [HTML] = [
            Page.paragraph(
                "If there is an account with \(flow.email), we sent it an 8-digit code. It works for 10 minutes."),
            Page.paragraph(
                "No email? Check your spam folder, or send a new code. We send codes only to addresses that bank with us.",
                class: "hint"),
        ]
        if usedUp {
            let over = now() >= tries.window.addingTimeInterval(Self.emailCodeWindow)
            body.append(
                .element(
                    "p", ["class": "error", "role": "alert"],
                    [
                        .text(
                            over
                                ? "That code no longer works: send a new code."
                                : error ?? Self.emailLocked(window: tries.window, now: now(), typed: false))
                    ]))
        } else {
            body.append(
                codeForm("/forgot/code", session, error: error, label: "Code from the email", button: "Continue"))
        }
        body.append(
            Page.actions([
                Page.form(
                    "/forgot/resend", session, [Page.button("Send a new code", kind: usedUp ? "primary" : "secondary")]),
                Page.form("/forgot/cancel", session, [Page.button("Start again", kind: "link")]),
            ]))
        return Page.layout("Check your email", screen(session, request, notice: notice), body)
    }

    func resetFactorPage(_ session: BankSession, _ request: Request, _ reset: PasswordReset, notice: String?) -> HTML {
        let passkeysHere = Self.passkeysWork(request)
        let options: [HTML] = reset.hints.compactMap { hint in
            guard passkeysHere || hint.kind != .passkey, let label = Self.factorChoice(hint) else { return nil }
            return Page.button(label, name: "factor", value: hint.id, kind: "secondary")
        }
        var body: [HTML] = [
            Page.paragraph("To keep your account safe, confirm the reset the way you confirm a sign-in:")
        ]
        if options.isEmpty {
            body.append(
                Page.paragraph(
                    "None of your ways to confirm works on this page. Call us: once we have checked it is you, "
                        + "we reset them and you can choose a new password.", class: "warning"))
        } else {
            body.append(Page.form("/forgot/challenge", session, class: "card stack", options))
        }
        if reset.hints.contains(where: { $0.kind == .passkey }) && !passkeysHere {
            body.append(Page.paragraph(Self.passkeysNeedAName, class: "hint"))
        }
        body.append(
            Page.paragraph(
                "Can't use any of these? Call us on the number on your card: we check it is you and reset them.",
                class: "hint"))
        body.append(Page.form("/forgot/cancel", session, [Page.button("Start again", kind: "link")]))
        return Page.layout("Confirm it's you", screen(session, request, notice: notice), body)
    }

    /// The new password, with the code of the factor chosen when it is one; for a device or a passkey the proof follows.
    func resetNewPage(_ session: BankSession, _ request: Request, _ flow: ResetFlow, draft: FormDraft?, notice: String?)
        -> HTML
    {
        let factor = flow.factor
        let usedUp = factor.map { $0.isTexted && $0.wrongTries >= Self.textedCodeTries } ?? false
        var body: [HTML] = []
        var fields: [HTML] = [
            .element("input", ["type": "hidden", "name": "username", "value": flow.email, "autocomplete": "username"]),
            Page.hidden("factor", factor?.hint.id ?? ""),
        ]
        let button: String
        switch factor?.hint.kind {
        case .phone(let masked)?:
            body.append(
                Page.paragraph(
                    "We sent a 6-digit code to \(masked). If the text does not arrive, we call you and read it out."))
            fields.append(
                Page.field(
                    "Code", name: "code", value: draft?["code"], error: draft?.errors["code"],
                    autocomplete: "one-time-code", inputmode: "numeric", maxlength: 12))
            button = "Change my password"
        case .totp?:
            body.append(Page.paragraph("Open your authenticator app and type the 6-digit code for Trifactor Bank."))
            fields.append(
                Page.field(
                    "Code", name: "code", value: draft?["code"], error: draft?.errors["code"],
                    autocomplete: "one-time-code", inputmode: "numeric", maxlength: 12))
            button = "Change my password"
        case .recoveryCode?:
            body.append(Page.paragraph("Each recovery code works once."))
            fields.append(
                Page.field(
                    "Recovery code", name: "code", value: draft?["code"], error: draft?.errors["code"],
                    autocomplete: "one-time-code", maxlength: 24))
            button = "Change my password"
        case .device?:
            body.append(Page.paragraph("Next, you approve the change on your device."))
            button = "Continue and approve on my device"
        case .passkey?:
            body.append(Page.paragraph("Next, you confirm the change with your passkey."))
            button = "Continue"
        default:
            button = "Change my password"
        }
        fields += [
            Page.field(
                "New password", name: "new_password", type: "password", error: draft?.errors["new_password"],
                hint: (draft ?? FormDraft()).passwordHint("new_password", usual: Self.passwordAdvice),
                autocomplete: "new-password"),
            Page.button(button),
        ]
        if usedUp {
            body.append(
                .element(
                    "p", ["class": "error", "role": "alert"],
                    [.text(draft?.errors["code"] ?? "That code no longer works: send a new code.")]))
        } else {
            body.append(Page.form("/forgot/new", session, class: "card stack", fields))
        }
        body.append(Page.paragraph("Changing it signs you out everywhere, on every device.", class: "hint"))
        var actions: [HTML] = []
        if factor?.isTexted == true {
            actions.append(
                Page.form(
                    "/forgot/text", session, [Page.button("Send a new code", kind: usedUp ? "primary" : "secondary")]))
            // A code that died has nothing left to read out.
            if !usedUp {
                actions.append(Page.form("/forgot/call", session, [Page.button("Call me instead", kind: "secondary")]))
            }
        }
        if flow.reset?.secondFactorRequired == true {
            actions.append(Page.form("/forgot/another", session, [Page.button("Use another way", kind: "link")]))
        }
        actions.append(Page.form("/forgot/cancel", session, [Page.button("Start again", kind: "link")]))
        body.append(Page.actions(actions))
        return Page.layout("Choose a new password", screen(session, request, notice: notice), body)
    }

    func resetPasskeyPage(_ session: BankSession, _ request: Request, notice: String?) -> HTML {
        Page.layout(
            "Confirm with your passkey", screen(session, request, notice: notice, passkeys: true),
            [
                Page.paragraph("Your passkey confirms that it is you changing the password."),
                Page.passkeyButton(
                    "Confirm with Touch ID / Face ID / your security key", flow: "reset", kind: "primary"),
                Page.actions([
                    Page.form("/forgot/another", session, [Page.button("Use another way", kind: "link")]),
                    Page.form("/forgot/cancel", session, [Page.button("Start again", kind: "link")]),
                ]),
            ])
    }
}
