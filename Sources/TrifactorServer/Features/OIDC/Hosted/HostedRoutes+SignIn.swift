import Core
import Crypto
import Foundation
import HTTP
import WebUI

extension HostedRoutes {
    /// `GET /authorize/sign-in`: the email first.
    func emailPage(_ request: Request) throws -> Response {
        guard let c = try context(request) else { return lostFlow(request) }
        let t = c.frame.text
        let notice: String? =
            if request.query["reset"] == "1" {
                t("signin.notice.reset")
            } else if request.query["expired"] == "1" {
                t("signin.notice.expired")
            } else if request.query["stopped"] == "1" {
                t("signin.notice.stopped")
            } else if request.query["signedout"] == "1" {
                t("signin.notice.signed_out")
            } else {
                nil
            }
        // "Not you? Use another email" starts from an empty field; signing in again starts from the known one.
        let known = c.flow.progress.email ?? c.flow.request.loginHint
        let session = try knownEmail(request)
        let email = request.query["other"] == "1" ? nil : known ?? session
        // prompt=login or max_age with nobody signed in on this browser is a first sign-in: it is not "again".
        return emailForm(c, email: email, error: nil, notice: notice, signedIn: session != nil)
    }

    /// The signed-in user's email, when this browser has a session (prompt=login, max_age: signing in again).
    private func knownEmail(_ request: Request) throws -> String? {
        try flows.session(token: HostedCookies.value(cookies.session, in: request), client: AuditContext(request))?.0
            .user.email
    }

    /// - Parameter signedIn: whether this browser has a live session (nil: not known here, taken as yes).
    func emailForm(
        _ c: Context, email: String?, error: String?, status: Int = 200, notice: String? = nil, signedIn: Bool? = nil
    ) -> Response {
        let again = (c.flow.request.has(.login) || c.flow.request.maxAge != nil) && signedIn != false
        var frame = c.frame
        frame.script = true
        let t = frame.text
        let page = HostedPage.layout(
            again ? t("signin.again.title") : t("signin.title", ["client": c.client.name]), frame,
            notice: notice ?? (again ? t("signin.again.notice", ["client": c.client.name]) : nil),
            [
                HostedPage.form(
                    "/authorize/sign-in", frame,
                    [
                        // "webauthn" lets the browser offer this site's passkeys as the field is focused.
                        HostedPage.field(
                            t("common.email"), name: "email", type: "email", value: email, error: error,
                            autocomplete: "username webauthn", autofocus: true, maxlength: 254),
                        HostedPage.actions([HostedPage.button(t("common.continue"))]),
                    ]),
                .element(
                    "form", ["method": "post", "action": "/authorize/passkey", "data-passkey-signin": ""],
                    [
                        HostedPage.hidden("flow", c.flow.id), HostedPage.hidden("csrf", frame.csrf ?? ""),
                        .element("input", ["type": "hidden", "name": "assertion", "data-assertion": ""]),
                        .element(
                            "p",
                            [
                                "class": "error", "role": "alert", "data-passkey-error": "", "hidden": "",
                                "tabindex": "-1",
                            ],
                            [.text(t("signin.passkey.no_answer"))]),
                        HostedPage.actions([
                            .element(
                                "button", ["type": "button", "class": "secondary", "data-passkey": "discover"],
                                [.text(t("signin.passkey.button"))])
                        ]),
                    ]),
                cancelForm(c),
            ])
        return HostedPage.response(page, frame, status: status)
    }

    /// `POST /authorize/sign-in`: keeps the email for the password page.
    func emailSubmitted(_ request: Request) throws -> Response {
        let form = Form(request.body)
        guard var c = try context(request, form: form) else { return lostFlow(request) }
        let email = form["email"] ?? ""
        guard (3...254).contains(email.utf8.count), email.contains("@"), !email.contains(" ") else {
            return emailForm(
                c, email: email, error: c.frame.text("common.email.invalid"), status: 422,
                signedIn: try knownEmail(request) != nil)
        }
        c.flow.progress.email = email
        // A new email is nobody proven yet: the pages speak no account's language until its password is.
        c.flow.progress.language = nil
        try flows.save(c.flow)
        return Self.seeOther("/authorize/password", flow: c.flow.id)
    }

    /// `GET /authorize/password`.
    func passwordPage(_ request: Request) throws -> Response {
        guard let c = try context(request) else { return lostFlow(request) }
        guard c.flow.progress.email != nil else { return Self.seeOther("/authorize/sign-in", flow: c.flow.id) }
        let wait = Self.clamped(request.query["wait"], to: 1...86_400) ?? 60
        let t = c.frame.text
        switch request.query["error"] {
        case "mismatch": return try passwordForm(c, request, error: t("password.mismatch"), status: 401)
        case "locked":
            return try passwordForm(
                c, request, error: t("common.too_many_tries", ["wait": t.duration(wait)]), status: 429)
        case "empty": return try passwordForm(c, request, error: t("password.empty"), status: 422)
        default:
            let notice = request.query["forgotten"] == "1" ? t("sitekey.forgotten") : nil
            return try passwordForm(c, request, error: nil, notice: notice)
        }
    }

    /// The password under the sitekey (or the neutral sentence: see `sitekeyCard`).
    func passwordForm(_ c: Context, _ request: Request, error: String?, status: Int = 200, notice: String? = nil)
        throws -> Response
    {
        let email = c.flow.progress.email ?? ""
        let t = c.frame.text
        let page = HostedPage.layout(
            t("password.title"), c.frame, notice: notice,
            [
                HostedPage.paragraph(t("password.as", ["email": email])),
                HostedPage.actions([
                    HostedPage.link(t("password.other_email"), "/authorize/sign-in?flow=\(c.flow.id)&other=1")
                ]),
            ] + (try sitekeyCard(c, request, email: email)) + [
                HostedPage.form(
                    "/authorize/password", c.frame,
                    [
                        // The username field lets password managers pair the password with the account.
                        .element(
                            "input",
                            [
                                "type": "email", "name": "username", "value": email, "autocomplete": "username",
                                "hidden": "",
                            ]),
                        HostedPage.field(
                            t("password.label"), name: "password", type: "password", error: error,
                            autocomplete: "current-password", autofocus: true, maxlength: 1024),
                        HostedPage.actions([HostedPage.button(t("common.sign_in"))]),
                    ]),
                HostedPage.actions([HostedPage.link(t("password.forgot"), "/authorize/reset?flow=\(c.flow.id)")]),
                cancelForm(c),
            ])
        return HostedPage.response(page, c.frame, status: status)
    }

    /// `POST /authorize/password`: the same sign-in as `POST /v1/sessions` (one lockout, one rate limit, one audit log).
    func passwordSubmitted(_ request: Request) throws -> Response {
        let form = Form(request.body)
        guard var c = try context(request, form: form) else { return lostFlow(request) }
        guard let email = c.flow.progress.email else { return Self.seeOther("/authorize/sign-in", flow: c.flow.id) }
        let password = form.raw("password") ?? ""
        // Errors come back through a GET (Post/Redirect/Get): a reload never posts the wrong password again.
        guard !password.isEmpty else {
            return Self.seeOther("/authorize/password", flow: c.flow.id, extra: "&error=empty")
        }
        do {
            switch try sessions.signIn(email: email, password: password, client: AuditContext(request)) {
            case .session(let token, let session):
                c.flow.progress.authenticatedHere = true
                c.flow.progress.accountChosen = true
                return try advance(
                    c, token: token, request, unsaved: true, headers: signedIn(request, token: token, session: session))
            case .secondFactor(let pending, _, _, let locale):
                if c.flow.progress.language != locale {
                    // The password is proven: the next pages may speak the account's language (and none left by
                    // another account in this browser).
                    c.flow.progress.language = locale
                    try flows.save(c.flow)
                }
                return Self.seeOther(
                    "/authorize/second-factor", flow: c.flow.id,
                    headers: [cookies.set(cookies.pending, pending, maxAge: 600)])
            }
        } catch SignInFailure.invalidCredentials, SignInFailure.disabled, SignInFailure.passkeyRefused {
            return Self.seeOther("/authorize/password", flow: c.flow.id, extra: "&error=mismatch")
        } catch SignInFailure.locked(let wait), CommonFailure.rateLimited(let wait) {
            return Self.seeOther("/authorize/password", flow: c.flow.id, extra: "&error=locked&wait=\(wait)")
        } catch CommonFailure.invalidFields {
            return Self.seeOther("/authorize/sign-in", flow: c.flow.id)
        }
    }

    /// `GET /authorize/account` (`prompt=select_account`): continue as the signed-in user, or another.
    func accountPage(_ request: Request) throws -> Response {
        guard let c = try context(request) else { return lostFlow(request) }
        guard
            let (caller, _) = try flows.session(
                token: HostedCookies.value(cookies.session, in: request), client: AuditContext(request))
        else { return Self.seeOther("/authorize/sign-in", flow: c.flow.id) }
        let t = c.frame.text
        let page = HostedPage.layout(
            t("account.title"), c.frame,
            [
                HostedPage.form(
                    "/authorize/account", c.frame,
                    [
                        HostedPage.actions([
                            HostedPage.button(
                                t("account.continue_as", ["email": caller.user.email]), name: "choice", value: "current"
                            ),
                            HostedPage.button(t("account.other"), name: "choice", value: "other", kind: "secondary"),
                        ])
                    ]),
                cancelForm(c),
                // The signed-in user's own security page is one link away from the hosted sign-in.
                HostedPage.paragraph(t("security.link.body", ["email": caller.user.email]), class: "hint"),
                .element("p", [:], [HostedPage.link(t("security.link"), "/account")]),
            ])
        return HostedPage.response(page, c.frame)
    }

    /// `POST /authorize/account`.
    func accountChosen(_ request: Request) throws -> Response {
        let form = Form(request.body)
        guard var c = try context(request, form: form) else { return lostFlow(request) }
        c.flow.progress.accountChosen = true
        if form["choice"] == "other" {
            // The other account signs in on a clean slate: this browser's session ends, not only its cookie.
            if let (caller, _) = try flows.session(
                token: HostedCookies.value(cookies.session, in: request), client: AuditContext(request))
            {
                try sessions.signOut(caller, client: AuditContext(request))
            }
            c.flow.progress.email = nil
            c.flow.progress.language = nil
            c.flow.progress.authenticatedHere = false
            try flows.save(c.flow)
            return Self.seeOther("/authorize/sign-in", flow: c.flow.id, headers: [cookies.clear(cookies.session)])
        }
        return try advance(c, token: HostedCookies.value(cookies.session, in: request), request, unsaved: true)
    }

    /// The "Cancel and return to the app" form under every step.
    func cancelForm(_ c: Context) -> HTML {
        HostedPage.form(
            "/authorize/cancel", c.frame,
            [HostedPage.button(c.frame.text("common.cancel", ["client": c.client.name]), kind: "link")])
    }

    /// A whole number from a URL, clamped to `range` (nil when absent or not a number).
    static func clamped(_ text: String?, to range: ClosedRange<Int>) -> Int? {
        guard let text, text.count <= 9, let value = Int(text) else { return nil }
        return min(max(value, range.lowerBound), range.upperBound)
    }
}
