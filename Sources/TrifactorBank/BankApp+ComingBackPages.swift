import Foundation
import HTTP
import TrifactorKit
import WebUI

/// The pages of confirming it's you: the choice (a passkey first) and the code.
extension BankApp {
    func confirmPage(_ session: BankSession, _ request: Request, intent: StepUpIntent?, factors: [FactorHint]) -> HTML {
        let title = intent.map { "Confirm it's you \($0.reason)" } ?? "Welcome back"
        var choices: [HTML] = []
        var buttons: [HTML] = []
        for (index, hint) in factors.enumerated() {
            let kind = index == 0 ? "primary" : "secondary"
            if hint.kind == .passkey {
                choices.append(
                    Page.passkeyButton(
                        "Use my passkey (Touch ID, Face ID or a security key)", flow: "step-up", factor: hint.id,
                        kind: kind))
            } else {
                buttons.append(Page.button(FactorLabel.of(hint), name: "factor", value: hint.id, kind: kind))
            }
        }
        choices.append(Page.form("/confirm/challenge", session, buttons))
        var body: [HTML] = [
            Page.paragraph(
                intent == nil
                    ? "For your safety your balances are hidden after a while away. Confirm it's you to go on."
                    : "This change needs a fresh second step, so that nobody else can make it from this browser."),
            .element("div", ["class": "card stack"], [Page.paragraph("Confirm with:")] + choices),
        ]
        if factors.isEmpty {
            body.append(
                Page.paragraph(
                    "You have no second factor that works here. Sign out and sign in again.", class: "warning"))
        }
        var actions: [HTML] = []
        if intent != nil {
            actions.append(Page.form("/confirm/cancel", session, [Page.button("Cancel", kind: "secondary")]))
        }
        actions.append(Page.form("/signout", session, [Page.button("Not you? Sign out", kind: "link")]))
        body.append(Page.actions(actions))
        return Page.layout(
            title,
            screen(session, request, notice: session.takeNotice(), passkeys: factors.contains { $0.kind == .passkey }),
            body)
    }

    func confirmCodePage(
        _ session: BankSession, _ request: Request, _ code: CodeChallenge, intent: StepUpIntent?, error: String?
    ) -> HTML {
        let text: String
        switch code.hint.kind {
        case .phone(let masked): text = "We sent a code to \(masked)."
        case .recoveryCode: text = "Type one of your recovery codes."
        default: text = "Type the code from your authenticator app."
        }
        let usedUp = code.isTexted && code.wrongTries >= Self.textedCodeTries
        var body: [HTML] = [Page.paragraph(text)]
        if usedUp {
            body.append(
                .element(
                    "p", ["class": "error", "role": "alert"],
                    [.text(error ?? "That code no longer works: send a new code.")]))
        } else {
            body.append(
                codeForm(
                    "/confirm/code", session, error: error,
                    label: code.hint.kind == .recoveryCode ? "Recovery code" : "Code"))
        }
        var actions: [HTML] = []
        if code.isTexted {
            actions.append(
                Page.form(
                    "/confirm/resend", session, [Page.button("Send a new code", kind: usedUp ? "primary" : "secondary")]
                ))
        }
        actions.append(Page.link("Use another way", "/confirm"))
        actions.append(Page.form("/signout", session, [Page.button("Sign out", kind: "link")]))
        body.append(Page.actions(actions))
        return Page.layout(
            intent.map { "Confirm it's you \($0.reason)" } ?? "Confirm it's you",
            screen(session, request, notice: session.takeNotice()), body)
    }
}

/// How a factor is named in the bank's pages.
enum FactorLabel {
    static func of(_ hint: FactorHint) -> String {
        switch hint.kind {
        case .phone(let masked): "A text message to \(masked)"
        case .totp: "My authenticator app"
        case .device: "My device"
        case .passkey: "My passkey"
        case .recoveryCode: "A recovery code"
        case .other(let kind): kind
        }
    }
}
