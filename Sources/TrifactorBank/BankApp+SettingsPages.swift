import API
import Foundation
import HTTP
import TrifactorKit
import WebUI

/// The settings page, card by card, and the page that asks before a second
/// factor is removed.
extension BankApp {
    func settingsPage(
        _ session: BankSession, _ request: Request, customer: String, factors: [EnrolledFactor],
        sessions others: [SessionSummary]
    ) -> HTML {
        let real = factors.filter { $0.kind != "recovery_code" }
        let factorRows: [HTML] = real.map { factor in
            .element(
                "li", [:],
                [
                    .element(
                        "div", ["class": "row"],
                        [
                            .element("strong", [:], [.text(factor.displayName)]),
                            .element(
                                "span", ["class": "muted"],
                                [.text("\(FactorLabel.of(FactorHint(factor))), added \(Self.day(factor.enrolledAt))")]),
                        ]),
                    Page.actions([
                        Page.link("Remove \(factor.displayName)", "/settings/factors/\(factor.enrollmentID)/remove")
                    ]),
                    Page.form(
                        "/settings/factors/rename", session, class: "rename",
                        [
                            Page.hidden("factor", factor.enrollmentID),
                            Page.field(
                                "New name for \(factor.displayName)", name: "name", value: nil, autocomplete: "off",
                                maxlength: 64, id: "f-name-\(factor.enrollmentID)"),
                            Page.button("Rename", kind: "secondary"),
                        ]),
                ])
        }
        let passkeysHere = Self.passkeysWork(request)
        let recovery = factors.first { $0.kind == "recovery_code" }
        let sessionRows: [HTML] = others.map { s in
            .element(
                "li", [:],
                [
                    .element(
                        "div", ["class": "row"],
                        [
                            .element("span", [:], [.text(s.device ?? s.userAgent ?? "Unknown browser")]),
                            s.current ? .element("strong", [:], ["This browser"]) : .empty,
                        ]),
                    .element(
                        "p", ["class": "muted"],
                        [
                            .text(
                                "From \(s.ip ?? "an unknown address"), last seen \(Self.day(s.lastSeenAt)) \(Self.dayAndTime(s.lastSeenAt).time)"
                            )
                        ]),
                    s.current
                        ? .empty
                        : Page.form(
                            "/settings/sessions/revoke", session,
                            [
                                Page.hidden("session", s.id), Page.button("Sign out this session", kind: "link"),
                            ]),
                ])
        }
        return Page.layout(
            "Settings", screen(session, request, notice: session.takeNotice(), tab: .settings, passkeys: true),
            [
                Page.card(
                    "Two-step verification", id: "factors",
                    [
                        real.isEmpty
                            ? Page.paragraph("Two-step verification is off: add a second step.", class: "warning")
                            : Page.paragraph("Every sign-in and transfer asks for one of these."),
                        .element("ul", ["class": "plain"], factorRows),
                        Page.actions([
                            Page.form(
                                "/settings/totp", session, [Page.button("Add an authenticator app", kind: "secondary")]),
                            factors.contains(where: { $0.kind == "phone" })
                                ? .empty
                                : Page.link("Turn on codes by text message", "/setup/phone", class: "button secondary"),
                        ]),
                    ]),
                Page.card(
                    "Passkeys", id: "passkeys",
                    [
                        Page.paragraph(
                            "Sign in and confirm transfers with Touch ID, Face ID, Windows Hello or a security key: no code to type."
                        ),
                        passkeysHere
                            ? Page.passkeyButton(
                                "Add a passkey (Touch ID, Face ID or a security key)", flow: "register")
                            : Page.paragraph(Self.passkeysNeedAName, class: "warning"),
                    ]),
                deviceCard(session),
                Page.card(
                    "Recovery codes", id: "recovery",
                    [
                        Page.paragraph(
                            "Codes to sign in when you have none of your devices. A new set replaces the old one."),
                        Page.paragraph(
                            recovery.map(Self.recoveryCodesLeft) ?? "You have no recovery codes yet.", class: "muted"),
                        Page.form(
                            "/settings/recovery", session, [Page.button("Make new recovery codes", kind: "secondary")]),
                    ]),
                Page.card(
                    "Password", id: "password",
                    [
                        Page.form(
                            "/settings/password", session, class: "stack",
                            [
                                .element(
                                    "input",
                                    [
                                        "type": "hidden", "name": "username", "value": session.stage.email ?? "",
                                        "autocomplete": "username",
                                    ]),
                                Page.field(
                                    "Current password", name: "current_password", type: "password",
                                    autocomplete: "current-password"),
                                Page.field(
                                    "New password", name: "new_password", type: "password", autocomplete: "new-password"
                                ),
                                Page.button("Change password", kind: "secondary"),
                            ])
                    ]),
                Page.card(
                    "Where you are signed in", id: "sessions",
                    [
                        .element("ul", ["class": "plain"], sessionRows),
                        Page.form(
                            "/settings/sessions/revoke-others", session,
                            [Page.button("Sign out everywhere else", kind: "secondary")]),
                    ]),
                browserCard(session, customer: customer, request),
            ])
    }

    /// How to link a device that approves sign-ins ("Sign in with my device"): the `trifactor` command-line app.
    func deviceCard(_ session: BankSession) -> HTML {
        let email = session.stage.email ?? "you@example.com"
        let server = configuration.trifactor.absoluteString
        return Page.card(
            "Your devices", id: "devices",
            [
                Page.paragraph(
                    "A phone or computer with the trifactor app can approve your sign-ins: then “Sign in with my device, no password” "
                        + "shows a number, and you pick it on the device. Linked devices are listed under Two-step verification."
                ),
                .element(
                    "details", [:],
                    [
                        .element("summary", [:], ["How to link a computer"]),
                        Page.paragraph(
                            "Install the trifactor command-line app, then run these three commands on that computer:"),
                        .element(
                            "pre", ["class": "command"],
                            [
                                .text(
                                    "trifactor --server \(server) login \(email)\ntrifactor device init --name laptop\ntrifactor approve --watch"
                                )
                            ]),
                        Page.paragraph(
                            "The first asks for your password and a code; the last waits for sign-ins and asks you to pick the number this page shows.",
                            class: "hint"),
                    ]),
            ])
    }

    func removePage(_ session: BankSession, _ request: Request, _ factor: EnrolledFactor, last: Bool) -> HTML {
        var body: [HTML] = []
        if last {
            body.append(
                .element(
                    "div", ["class": "warning", "role": "note"],
                    [
                        .element("p", [:], [.element("strong", [:], ["Two-step verification turns off."])]),
                        Page.paragraph(
                            "\(factor.displayName) is your only second step. Without it, signing in needs only your password, your balances stay "
                                + "hidden until you add a second step again, and your recovery codes are removed with it."
                        ),
                    ]))
        } else {
            body.append(Page.paragraph("Sign-ins and transfers will no longer offer \(factor.displayName)."))
        }
        body.append(
            Page.actions([
                Page.form(
                    "/settings/factors/remove", session,
                    [
                        Page.hidden("factor", factor.enrollmentID), Page.hidden("name", factor.displayName),
                        Page.button(
                            last
                                ? "Remove \(factor.displayName) and turn off two-step verification"
                                : "Remove \(factor.displayName)", kind: "danger"),
                    ]),
                Page.link("Keep it", "/settings"),
            ]))
        return Page.layout("Remove \(factor.displayName)?", screen(session, request, tab: .settings), body)
    }
}

extension BankApp {
    /// "8 of your 10 recovery codes are left (made on 2 December 2026, last used on …)." and a nudge when few are.
    static func recoveryCodesLeft(_ set: EnrolledFactor) -> String {
        let made =
            "made on \(Self.day(set.enrolledAt))"
            + (set.lastUsedAt.map { ", last used on \(Self.day($0))" } ?? ", none used yet")
        guard let left = set.codesLeft else {
            return "You have a set of recovery codes (\(made)). Each code works once."
        }
        if left == 0 { return "You have used every recovery code of your set (\(made)): make a new set now." }
        let count = left == 1 ? "1 recovery code is" : "\(left) recovery codes are"
        return "\(count) left (\(made)). Each works once" + (left <= 3 ? ": make a new set soon." : ".")
    }
}

extension BankSession.Stage {
    /// The signed-in customer's email.
    var email: String? { if case .signedIn(_, let email) = self { email } else { nil } }

}
