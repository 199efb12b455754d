import API
import Core
import Foundation
import HTTP
import WebUI

/// The security page's changes. Each is a form with the page's CSRF token, answered by a redirect back to the page
/// (Post/Redirect/Get); those that weaken or reset the account (removing a factor, new recovery codes, "This wasn't
/// me") first ask for a second factor proven within the re-authentication window, through the hosted sign-in.
extension HostedRoutes {
    /// `POST /account/rename`: a factor's new name (cosmetic: no fresh proof).
    func accountRename(_ request: Request, _ form: Form, _ c: AccountContext) throws -> Response {
        let id = form["factor"] ?? ""
        do {
            _ = try enrollments.rename(FactorID(id), to: form["name"], by: c.caller, client: AuditContext(request))
        } catch CommonFailure.invalidFields {
            return try accountPage(c, renameError: (id, c.frame.text("security.rename.invalid")), status: 400)
        } catch SecondFactorFailure.factorNotFound {
            return try accountPage(c, notice: c.frame.text("security.factor_gone"), status: 404)
        }
        return Response(status: 303, headers: [("Location", "/account?done=renamed")])
    }

    /// Whether the user proved a second factor recently enough for a change that needs it.
    func isFresh(_ c: AccountContext) -> Bool {
        c.caller.session.freshSecondFactor(now: c.now, window: enrollments.reauthenticationWindow)
    }

    /// "Confirm it's you": the page before a change that needs a fresh second factor; its button signs in again and
    /// comes back to `then`.
    func confirmPage(_ c: AccountContext, then: String, reason: String) -> Response {
        let t = c.frame.text
        let page = HostedPage.layout(
            t("security.confirm.title"), c.frame,
            [
                HostedPage.paragraph(t(reason)),
                HostedPage.paragraph(
                    t(
                        "security.confirm.body",
                        ["minutes": t.number(max(1, Int((enrollments.reauthenticationWindow + 59) / 60)))])),
                Self.accountForm(
                    "/account/confirm", c,
                    [
                        HostedPage.hidden("then", then),
                        HostedPage.actions([
                            HostedPage.button(t("security.confirm.button")),
                            HostedPage.link(t("security.back"), "/account", class: "button secondary"),
                        ]),
                    ]),
            ])
        return HostedPage.response(page, c.frame)
    }

    /// `POST /account/confirm`: signs in again now (`max_age=0`), then returns to the page that asked.
    func accountConfirm(_ request: Request, _ form: Form, _ c: AccountContext) throws -> Response {
        let then =
            form["then"].flatMap { OwnPages.isReturn($0, under: "/account") ? $0 : nil } ?? "/account?done=confirmed"
        return try signInForOwnPage(request, path: "/account", fresh: true, then: then)
    }

    /// `GET /account/remove?factor=`: asks before removing a factor (and for a fresh second factor first).
    func accountRemovePage(_ request: Request, _ c: AccountContext) throws -> Response {
        let id = request.query["factor"] ?? ""
        let here = "/account/remove?factor=" + (HostedRoutes.formEncode(id))
        let t = c.frame.text
        let factors = try enrollments.listed(c.caller)
        guard let factor = factors.first(where: { $0.enrollmentID == id && $0.kind != .recoveryCode }) else {
            return try accountPage(c, notice: t("security.factor_gone"), status: 404)
        }
        guard isFresh(c) else { return confirmPage(c, then: here, reason: "security.confirm.remove") }
        let last = factors.filter { $0.kind != .recoveryCode }.count == 1
        let page = HostedPage.layout(
            t("security.remove.title", ["name": factor.displayName]), c.frame,
            [
                HostedPage.paragraph(
                    t("security.remove.body", ["name": factor.displayName, "kind": Self.kindLabel(factor, t)])),
                last ? HostedPage.paragraph(t("security.remove.last"), class: "error") : .empty,
                Self.accountForm(
                    "/account/remove", c,
                    [
                        HostedPage.hidden("factor", id),
                        HostedPage.actions([
                            HostedPage.button(
                                t("security.remove.confirm", ["name": factor.displayName]), kind: "danger"),
                            HostedPage.link(t("security.remove.keep"), "/account", class: "button secondary"),
                        ]),
                    ]),
            ])
        return HostedPage.response(page, c.frame)
    }

    /// `POST /account/remove`: removes the factor (the service checks the fresh second factor again).
    func accountRemove(_ request: Request, _ form: Form, _ c: AccountContext) throws -> Response {
        let id = form["factor"] ?? ""
        do {
            try enrollments.remove(FactorID(id), by: c.caller, client: AuditContext(request))
        } catch SecondFactorFailure.secondFactorRequired {
            // The proof grew old while the page was open: ask again, then come back to the same question.
            return confirmPage(
                c, then: "/account/remove?factor=" + HostedRoutes.formEncode(id), reason: "security.confirm.remove")
        } catch SecondFactorFailure.factorNotFound {
            return try accountPage(c, notice: c.frame.text("security.factor_gone"), status: 404)
        }
        return Response(status: 303, headers: [("Location", "/account?done=removed")])
    }

    /// `POST /account/sessions/end`: ends one of the user's other sessions, or all of them (`session=others`).
    func accountEndSession(_ request: Request, _ form: Form, _ c: AccountContext) throws -> Response {
        let audit = AuditContext(request)
        if form["session"] == "others" {
            for s in try sessions.list(c.caller) where s.id != c.caller.session.id {
                do { try sessions.revoke(s.id, by: c.caller, client: audit) } catch SessionFailure.notFound {}
            }
            return Response(status: 303, headers: [("Location", "/account?done=ended_all")])
        }
        let id = form["session"] ?? ""
        // This browser's own session ends with "Sign out", which says where it leaves the user.
        guard id != c.caller.session.id.raw else { return Response(status: 303, headers: [("Location", "/account")]) }
        do {
            try sessions.revoke(SessionID(id), by: c.caller, client: audit)
        } catch SessionFailure.notFound {
            // Ended meanwhile (in another tab, by expiry): what the user wanted.
        }
        return Response(status: 303, headers: [("Location", "/account?done=ended")])
    }

    /// `GET /account/recovery-codes`: asks before making new recovery codes (the old ones stop working).
    func accountCodesPage(_ request: Request, _ c: AccountContext) throws -> Response {
        let here = "/account/recovery-codes"
        let t = c.frame.text
        guard isFresh(c) else { return confirmPage(c, then: here, reason: "security.confirm.codes") }
        let page = HostedPage.layout(
            t("security.codes.new"), c.frame,
            [
                HostedPage.paragraph(t("security.codes.warning")),
                Self.accountForm(
                    "/account/recovery-codes", c,
                    [
                        // The set this page replaces: sent again (a reload after the codes were shown), the form
                        // finds another set in place and makes none.
                        HostedPage.hidden("replaces", try currentCodes(c) ?? "none"),
                        HostedPage.actions([
                            HostedPage.button(t("security.codes.make")),
                            HostedPage.link(t("security.back"), "/account", class: "button secondary"),
                        ]),
                    ]),
            ])
        return HostedPage.response(page, c.frame)
    }

    /// `POST /account/recovery-codes`: the new codes, shown once on a page that is never stored.
    func accountCodes(_ request: Request, _ form: Form, _ c: AccountContext) throws -> Response {
        let t = c.frame.text
        guard form["replaces"] == (try currentCodes(c) ?? "none") else {
            let page = HostedPage.layout(
                t("security.codes.title"), c.frame,
                [
                    HostedPage.paragraph(t("security.codes.already")),
                    HostedPage.actions([HostedPage.link(t("security.back"), "/account", class: "button primary")]),
                ])
            return HostedPage.response(page, c.frame)
        }
        let codes: [String]
        do {
            codes = try enrollments.recoveryCodes(for: c.caller, client: AuditContext(request))
        } catch SecondFactorFailure.secondFactorRequired, SecondFactorFailure.reauthenticationRequired {
            return confirmPage(c, then: "/account/recovery-codes", reason: "security.confirm.codes")
        } catch SecondFactorFailure.needed, SecondFactorFailure.unverifiedEmail {
            return try accountPage(c, notice: t("security.codes.unavailable"), status: 409)
        }
        let page = HostedPage.layout(
            t("security.codes.title"), c.frame,
            [
                HostedPage.paragraph(t("security.codes.shown_once")),
                .element(
                    "ol", ["class": "codes", "dir": "ltr"],
                    codes.map { .element("li", [:], [.element("code", [:], [.text($0)])]) }),
                HostedPage.actions([HostedPage.link(t("security.codes.saved"), "/account", class: "button primary")]),
            ])
        return HostedPage.response(page, c.frame)
    }

    /// The id of the user's current set of recovery codes, nil when they have none.
    func currentCodes(_ c: AccountContext) throws -> String? {
        try enrollments.list(c.caller).first { $0.kind == .recoveryCode }?.id.raw
    }

    /// `POST /account/sign-out`: ends this browser's session.
    func accountSignOut(_ request: Request, _ form: Form, _ c: AccountContext) throws -> Response {
        try sessions.signOut(c.caller, client: AuditContext(request))
        let t = c.frame.text
        let frame = HostedPage.Frame(text: t, brand: brand)
        let page = HostedPage.layout(
            t("security.signed_out.title"), frame,
            [
                HostedPage.paragraph(t("security.signed_out.body")),
                HostedPage.actions([HostedPage.link(t("security.sign_in_again"), "/account", class: "button primary")]),
            ])
        return HostedPage.response(page, frame, headers: [cookies.clear(cookies.session)])
    }
}
