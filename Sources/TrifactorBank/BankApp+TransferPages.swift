import Foundation
import HTTP
import TrifactorKit
import WebUI

/// The pages of a transfer: the form (To another account than From; the
/// payee's fields only for a payee, by the stylesheet alone, so it works
/// without script), the review ("Change it" keeps what was typed), and the
/// code page with a new code, another way and a cancel.
extension BankApp {
    func transferPage(
        _ session: BankSession, _ request: Request, accounts: [Ledger.Account], draft: FormDraft?, notice: String?
    ) -> HTML {
        let errors = draft?.errors ?? [:]
        let own = accounts.map { ($0.id, "\($0.name) (\($0.balance.description))") }
        let from = draft?["from"] ?? accounts.first?.id
        let to = draft?["to"] ?? accounts.first { $0.id != from }?.id
        return Page.layout(
            "Make a transfer", screen(session, request, notice: notice, tab: .transfer, money: true),
            [
                Page.form(
                    "/transfer", session, class: "card",
                    [
                        Page.select("From", name: "from", options: own, selected: from, error: errors["from"]),
                        Page.select(
                            "To", name: "to",
                            options: accounts.map { ($0.id, $0.name) } + [("payee", "A payee at another bank")],
                            selected: to,
                            error: errors["to"]),
                        .element(
                            "fieldset", ["class": "payee"],
                            [
                                .element("legend", [:], ["The payee (for a payee at another bank)"]),
                                Page.field(
                                    "Payee name", name: "payee_name", value: draft?["payee_name"],
                                    error: errors["payee_name"], autocomplete: "off",
                                    required: false, maxlength: 70),
                                Page.field(
                                    "Payee IBAN", name: "iban", value: draft?["iban"], error: errors["iban"],
                                    hint: "Like DE89 3704 0044 0532 0130 00.",
                                    autocomplete: "off", required: false),
                            ]),
                        Page.field(
                            "Amount in EUR", name: "amount", value: draft?["amount"], error: errors["amount"],
                            hint: "Like 250 or 250.50.",
                            autocomplete: "off", inputmode: "decimal"),
                        Page.field(
                            "Reference (optional)", name: "reference", value: draft?["reference"],
                            error: errors["reference"],
                            hint: "Shown on both statements, like “Rent March”.", autocomplete: "off", required: false,
                            maxlength: 140),
                        Page.button("Review transfer"),
                    ])
            ])
    }

    /// The transfer's summary: amount, from, to, reference.
    func summary(_ pending: PendingTransfer) -> HTML {
        var rows: [HTML] = [
            .element("dt", [:], ["Amount"]), .element("dd", ["class": "big"], [.text(pending.amount.description)]),
            .element("dt", [:], ["From"]), .element("dd", [:], [.text(pending.fromName)]),
            .element("dt", [:], ["To"]),
        ]
        switch pending.to {
        case .payee(let name, let iban):
            rows.append(
                .element(
                    "dd", [:], [.text(name), .element("span", ["class": "iban block"], [.text(iban.description)])]))
        case .account: rows.append(.element("dd", [:], [.text(pending.toLabel)]))
        }
        if let reference = pending.reference {
            rows += [.element("dt", [:], ["Reference"]), .element("dd", [:], [.text(reference)])]
        }
        return .element("div", ["class": "card"], [.element("dl", ["class": "summary"], rows)])
    }

    func reviewPage(
        _ session: BankSession, _ request: Request, _ pending: PendingTransfer, factors: [FactorHint], notice: String?
    ) -> HTML {
        Page.layout(
            "Check your transfer", screen(session, request, notice: notice, tab: .transfer),
            [
                summary(pending),
                Page.form(
                    "/transfer/confirm", session, class: "card stack",
                    [
                        Page.hidden("transfer", pending.id),
                        Page.radios(
                            "Confirm with", name: "factor", options: factors.map { ($0.id, FactorLabel.of($0)) },
                            selected: pending.factor?.id),
                        Page.button("Confirm transfer"),
                    ]),
                reviewActions(session, pending),
            ])
    }

    /// Under a transfer's review: change it (the form as typed) or cancel it.
    func reviewActions(_ session: BankSession, _ pending: PendingTransfer) -> HTML {
        Page.actions([
            Page.link("Change it", "/transfer?change=\(pending.id)"),
            Page.form(
                "/transfer/cancel", session,
                [Page.hidden("transfer", pending.id), Page.button("Cancel the transfer", kind: "link")]),
        ])
    }

    func approvePage(
        _ session: BankSession, _ request: Request, _ pending: PendingTransfer, error: String?,
        notice: String?
    ) -> HTML {
        let hidden = Page.hidden("transfer", pending.id)
        let cancel = Page.form("/transfer/cancel", session, [hidden, Page.button("Cancel the transfer", kind: "link")])
        let another = Page.form("/transfer/another", session, [hidden, Page.button("Use another way", kind: "link")])
        if pending.passkeyOptions != nil {
            return Page.layout(
                "Confirm the transfer", screen(session, request, notice: notice, tab: .transfer, passkeys: true),
                [
                    Page.paragraph(pending.summary ?? "Confirm the transfer"),
                    Page.paragraph("Your passkey signs this exact transfer: its amount and payee."),
                    .element(
                        "button",
                        [
                            "type": "button", "class": "primary", "data-passkey": "authorize",
                            "data-transfer": pending.id,
                        ],
                        ["Confirm with Touch ID / Face ID / your security key"]),
                    Page.actions([another, cancel]),
                ])
        }
        let texted: Bool = if case .phone = pending.factor?.kind { true } else { false }
        let sentTo: String
        switch pending.factor?.kind {
        case .phone(let masked)?:
            sentTo =
                "We sent a code to \(masked); the message names the amount and the payee. Check them before you type it."
        default: sentTo = "Type the code from your authenticator app."
        }
        let usedUp = texted && pending.wrongTries >= Self.textedCodeTries
        var body: [HTML] = [
            Page.paragraph(pending.summary ?? "Confirm the transfer", class: "big"), Page.paragraph(sentTo),
        ]
        if usedUp {
            body.append(
                .element(
                    "p", ["class": "error", "role": "alert"],
                    [.text(error ?? "That code no longer works: send a new code.")]))
        } else {
            body.append(
                codeForm("/transfer/approve", session, error: error, button: "Confirm and send", hidden: [hidden]))
        }
        var actions: [HTML] = []
        if texted {
            actions.append(
                Page.form(
                    "/transfer/resend", session,
                    [hidden, Page.button("Send a new code", kind: usedUp ? "primary" : "secondary")]))
        }
        actions += [another, cancel]
        body.append(Page.actions(actions))
        return Page.layout("Confirm the transfer", screen(session, request, notice: notice, tab: .transfer), body)
    }
}
