import Foundation
import HTTP
import Sitekeys
import TrifactorKit
import WebUI

/// The pages of opening an account: the form, the email code and the
/// mobile code, each code page with a way to a new code and a way back.
extension BankApp {
    /// What a new password must be, under every field that asks for one.
    static let passwordAdvice = "At least 8 characters, not a common password; a few words are easiest."

    func openPage(_ viewer: any Viewer, _ request: Request, draft: FormDraft?, notice: String?) -> HTML {
        let errors = draft?.errors ?? [:]
        let pictures: [HTML] = Sitekey.pictures.map { picture in
            .element(
                "label", [:],
                [
                    .element("img", ["src": SitekeyPictures.path(picture), "alt": ""]),
                    .element(
                        "span", [:],
                        [
                            .element(
                                "input",
                                [
                                    "type": "radio", "name": "picture", "value": picture,
                                    "checked": draft?["picture"] == picture ? "" : nil, "required": "",
                                ]),
                            .text(picture),
                        ]),
                ])
        }
        var fieldset: [HTML] = [.element("legend", [:], ["Your sitekey picture"])] + pictures
        if let error = errors["picture"] {
            fieldset.append(.element("p", ["class": "error", "role": "alert"], [.text(error)]))
        }
        var body: [HTML] = []
        if let error = errors["form"] {
            body.append(.element("p", ["class": "error", "role": "alert"], [.text(error)]))
        }
        body.append(
            Page.form(
                "/open", viewer, class: "card",
                [
                    .element("h2", [:], ["About you"]),
                    Page.field(
                        "Full name", name: "name", value: draft?["name"], error: errors["name"], autocomplete: "name",
                        maxlength: 70),
                    Page.field(
                        "Email", name: "email", type: "email", value: draft?["email"], error: errors["email"],
                        autocomplete: "email"),
                    Page.field(
                        "Password", name: "password", type: "password", error: errors["password"],
                        hint: (draft ?? FormDraft()).passwordHint("password", usual: Self.passwordAdvice),
                        autocomplete: "new-password"),
                    Page.field(
                        "Mobile number", name: "phone", type: "tel", value: draft?["phone"], error: errors["phone"],
                        hint: "We text it a code for every sign-in and transfer.", autocomplete: "tel"),
                    .element("h2", [:], ["Your sitekey"]),
                    Page.paragraph(
                        "Your sitekey is shown before you type your password, so you know the site is ours."),
                    .element("fieldset", ["class": "pictures"], fieldset),
                    Page.field(
                        "Sitekey phrase", name: "phrase", value: draft?["phrase"], error: errors["phrase"],
                        hint: "3 to 40 letters, digits or spaces.",
                        maxlength: 40),
                    Page.button("Open my account"),
                ]))
        body.append(Page.paragraph("Already a customer?"))
        body.append(Page.link("Sign in", "/", class: "button secondary"))
        return Page.layout("Open an account", screen(viewer, request, notice: notice), body)
    }

    func openEmailPage(_ session: BankSession, _ request: Request, _ opening: Opening, error: String?, notice: String?)
        -> HTML
    {
        let usedUp = opening.emailTries >= Self.emailCodeTries
        var body: [HTML] = [
            Page.paragraph("We sent a 6-digit code to \(opening.email)."),
            Page.paragraph(
                "If you opened an account with this email before, we emailed you a note instead of a code: sign in with your password, or "
                    + "start again and type the same password.", class: "hint"),
        ]
        if usedUp {
            let over = now() >= opening.emailWindow.addingTimeInterval(Self.emailCodeWindow)
            body.append(
                .element(
                    "p", ["class": "error", "role": "alert"],
                    [
                        .text(
                            over
                                ? "That code no longer works: send a new code."
                                : error ?? Self.emailLocked(window: opening.emailWindow, now: now(), typed: false))
                    ]))
        } else {
            body.append(codeForm("/open/verify", session, error: error))
        }
        body.append(
            Page.actions([
                Page.form(
                    "/open/verify/resend", session,
                    [Page.button("Send a new code", kind: usedUp ? "primary" : "secondary")]),
                Page.form("/open/restart", session, [Page.button("Start again", kind: "link")]),
            ]))
        return Page.layout("Check your email", screen(session, request, notice: notice), body)
    }

    func openPhonePage(
        _ session: BankSession, _ request: Request, _ opening: Opening, draft: FormDraft?, notice: String?
    ) -> HTML {
        let usedUp = opening.phoneTries >= Self.textedCodeTries
        var body: [HTML] = []
        if let masked = opening.enrollment?.maskedPhone {
            body.append(
                Page.paragraph(
                    "Your email is confirmed. We sent a code to \(masked): it protects every sign-in and transfer."))
            if usedUp {
                body.append(
                    .element(
                        "p", ["class": "error", "role": "alert"],
                        [.text(draft?.errors["code"] ?? "That code no longer works: send a new code.")]))
            } else {
                body.append(codeForm("/open/phone", session, error: draft?.errors["code"]))
            }
        } else {
            body.append(
                Page.paragraph("Your email is confirmed, but no code could be sent to your mobile.", class: "warning"))
            if let reason = opening.textRefused { body.append(.element("p", ["role": "alert"], [.text(reason)])) }
        }
        body.append(
            Page.actions([
                Page.form(
                    "/open/phone/resend", session,
                    [
                        Page.button(
                            "Send a new code", kind: usedUp || opening.enrollment == nil ? "primary" : "secondary")
                    ]),
                Page.form("/open/restart", session, [Page.button("Start again", kind: "link")]),
            ]))
        body.append(changeNumber("/open/phone/number", session, current: opening.phone, draft: draft))
        return Page.layout("Confirm your mobile", screen(session, request, notice: notice), body)
    }

    /// The code field and its button.
    func codeForm(
        _ action: String, _ viewer: any Viewer, error: String?, label: String = "Code", button: String = "Confirm",
        hidden: [HTML] = []
    ) -> HTML {
        Page.form(
            action, viewer, class: "card stack",
            hidden + [
                Page.field(
                    label, name: "code", error: error, autocomplete: "one-time-code", inputmode: "numeric",
                    autofocus: true, maxlength: 12),
                Page.button(button),
            ])
    }

    /// "Change the number": a disclosure with the number field (open when the typed number was refused).
    func changeNumber(_ action: String, _ viewer: any Viewer, current: String, draft: FormDraft?) -> HTML {
        .element(
            "details", ["class": "card", "open": draft?.errors["phone"] == nil ? nil : ""],
            [
                .element("summary", [:], ["Change the number"]),
                Page.form(
                    action, viewer, class: "stack",
                    [
                        Page.field(
                            "Mobile number", name: "phone", type: "tel", value: draft?["phone"] ?? current,
                            error: draft?.errors["phone"], autocomplete: "tel"),
                        Page.button("Send the code to this number", kind: "secondary"),
                    ]),
            ])
    }
}
