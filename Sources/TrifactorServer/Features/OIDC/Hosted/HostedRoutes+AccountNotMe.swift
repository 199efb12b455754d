import API
import Core
import Foundation
import HTTP
import WebUI

/// "This wasn't me" on the security page: a new password, the factors the user ticks to remove with it, then
/// everything that lets someone act as the user ends (`AccountService.reportNotMe`).
extension HostedRoutes {
    /// `GET /account/not-me`: "This wasn't me" explained, with the new password it needs.
    func accountNotMePage(_ request: Request, _ c: AccountContext) throws -> Response {
        let here = "/account/not-me"
        guard isFresh(c) else { return confirmPage(c, then: here, reason: "security.confirm.not_me") }
        return try notMeForm(c, error: nil)
    }

    /// The user's factors as boxes to tick for removal: someone who had the password may have added one to come back
    /// without it. None is ticked unless `ticked` (the form sent back) says so.
    private func factorBoxes(_ c: AccountContext, ticked: Set<String>?) throws -> HTML {
        let t = c.frame.text
        let factors = try enrollments.listed(c.caller).filter { $0.kind != .recoveryCode }
        guard !factors.isEmpty else { return .empty }
        let boxes: [HTML] = factors.map { f in
            let added = Int64(f.enrolledAt.timeIntervalSince1970 * 1000)
            // Never ticked for the user: the factor they just proved is most likely their own, and removing the
            // last one leaves the account on a password alone. The recent ones say so in their line.
            let on = ticked?.contains(f.enrollmentID) ?? false
            let box = HTML.element(
                "input",
                ["type": "checkbox", "name": "remove-\(f.enrollmentID)", "value": "1", "checked": on ? "" : nil])
            return .element(
                "li", [:],
                [
                    .element(
                        "label", ["class": "check"],
                        [box, .element("strong", [:], [.text(f.displayName)]), .text(" (\(Self.kindLabel(f, t))), ")]
                            + Self.timed("security.added", added, now: c.now, t))
                ])
        }
        return .element(
            "fieldset", [:],
            [
                .element("legend", [:], [.text(t("security.not_me.factors"))]),
                .element("ul", ["class": "list"], boxes),
            ])
    }

    private func notMeForm(_ c: AccountContext, error: String?, ticked: Set<String>? = nil, status: Int = 200) throws
        -> Response
    {
        let t = c.frame.text
        let page = HostedPage.layout(
            t("security.not_me.title"), c.frame,
            [
                HostedPage.paragraph(t("security.not_me.explain")),
                Self.accountForm(
                    "/account/not-me", c,
                    [
                        try factorBoxes(c, ticked: ticked),
                        HostedPage.field(
                            t("security.not_me.password"), name: "password", type: "password", error: error,
                            hint: t("reset.password.hint", ["min": t.number(resets.passwordPolicy.minimumLength)]),
                            autocomplete: "new-password", autofocus: error != nil, maxlength: 1024),
                        HostedPage.actions([
                            HostedPage.button(t("security.not_me.confirm"), kind: "danger"),
                            HostedPage.link(t("security.back"), "/account", class: "button secondary"),
                        ]),
                    ]),
            ])
        return HostedPage.response(page, c.frame, status: status)
    }

    /// `POST /account/not-me`: the password replaced, the ticked factors removed, every session ended (this one
    /// too), the owner emailed.
    func accountNotMe(_ request: Request, _ form: Form, _ c: AccountContext) throws -> Response {
        let t = c.frame.text
        let ticked = Set(form.fields.keys.filter { $0.hasPrefix("remove-") }.map { String($0.dropFirst(7)) })
        let removing = try enrollments.listed(c.caller).filter {
            $0.kind != .recoveryCode && ticked.contains($0.enrollmentID)
        }.map(\.displayName)
        let ended: Int
        do {
            ended = try accounts.reportNotMe(
                c.caller, newPassword: form["password"] ?? "", removing: ticked.map { FactorID($0) },
                client: AuditContext(request))
        } catch SecondFactorFailure.secondFactorRequired {
            return confirmPage(c, then: "/account/not-me", reason: "security.confirm.not_me")
        } catch CommonFailure.invalidFields(let fields) {
            let field = fields.first
            let sentence =
                switch field?.reason {
                case let reason? where reason.hasPrefix("must differ"): t("security.not_me.same")
                case let reason? where reason.hasPrefix("your password changed"): t("security.expired.body")
                default: Self.passwordSentence(field?.violation, policy: resets.passwordPolicy, t)
                }
            return try notMeForm(c, error: sentence, ticked: ticked, status: 422)
        } catch CommonFailure.rateLimited(let wait) {
            return try notMeForm(
                c, error: t("common.too_many_tries", ["wait": t.duration(wait)]), ticked: ticked, status: 429)
        }
        var frame = c.frame
        frame.csrf = nil
        let page = HostedPage.layout(
            t("security.not_me.done.title"), frame,
            [
                HostedPage.paragraph(t("security.not_me.done.body", ["sessions": t.number(ended)])),
                removing.isEmpty
                    ? .empty
                    : HostedPage.paragraph(
                        t("security.not_me.removed", ["names": removing.map { "“\($0)”" }.joined(separator: ", ")])),
                HostedPage.actions([HostedPage.link(t("security.sign_in_again"), "/account", class: "button primary")]),
            ])
        return HostedPage.response(page, frame, headers: [cookies.clear(cookies.session)])
    }
}
