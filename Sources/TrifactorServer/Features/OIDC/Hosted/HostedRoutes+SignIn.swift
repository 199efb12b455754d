import Core
import Crypto
import Foundation
import HTTP
import WebUI

extension HostedRoutes {
    /// `GET /authorize/sign-in`: the email first.
    func emailPage(_ request: Request) throws -> Response {
        guard let c = try context(request) else { return lostFlow(request) }
        let notice: String? =
            if request.query["reset"] == "1" {
                "Your password is changed, and you are signed out everywhere. Sign in with the new one."
            } else if request.query["expired"] == "1" {
                "That sign-in took too long. Start again: it takes a moment."
            } else if request.query["stopped"] == "1" {
                "Too many wrong codes: that sign-in stopped. Sign in again to get a new chance."
            } else if request.query["signedout"] == "1" {
                "You were signed out meanwhile. Sign in again to continue."
            } else {
                nil
            }
        // "Not you? Use another email" starts from an empty field; signing in again starts from the known one.
        let known = c.flow.progress.email ?? c.flow.request.loginHint
        let email = request.query["other"] == "1" ? nil : try known ?? knownEmail(request)
        return emailForm(c, email: email, error: nil, notice: notice)
    }

    /// The signed-in user's email, when this browser has a session (prompt=login, max_age: signing in again).
    private func knownEmail(_ request: Request) throws -> String? {
        try flows.session(token: HostedCookies.value(cookies.session, in: request), client: AuditContext(request))?.0
            .user.email
    }

    func emailForm(_ c: Context, email: String?, error: String?, status: Int = 200, notice: String? = nil)
        -> Response
    {
        let again = c.flow.request.has(.login) || c.flow.request.maxAge != nil
        var frame = c.frame
        frame.script = true
        let page = HostedPage.layout(
            again ? "Sign in again to continue" : "Sign in to \(c.client.name)", frame,
            notice: notice ?? (again ? "\(c.client.name) asks you to prove it is you again." : nil),
            [
                HostedPage.form(
                    "/authorize/sign-in", frame,
                    [
                        // "webauthn" lets the browser offer this site's passkeys as the field is focused.
                        HostedPage.field(
                            "Email", name: "email", type: "email", value: email, error: error,
                            autocomplete: "username webauthn", autofocus: true, maxlength: 254),
                        HostedPage.actions([HostedPage.button("Continue")]),
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
                            ["That passkey did not answer. Try again, or continue with your email."]),
                        HostedPage.actions([
                            .element(
                                "button", ["type": "button", "class": "secondary", "data-passkey": "discover"],
                                ["Sign in with a passkey"])
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
            return emailForm(c, email: email, error: "Enter your email address, like ann@example.com.", status: 422)
        }
        c.flow.progress.email = email
        try flows.save(c.flow)
        return Self.seeOther("/authorize/password", flow: c.flow.id)
    }

    /// `GET /authorize/password`.
    func passwordPage(_ request: Request) throws -> Response {
        guard let c = try context(request) else { return lostFlow(request) }
        guard c.flow.progress.email != nil else { return Self.seeOther("/authorize/sign-in", flow: c.flow.id) }
        let wait = Self.clamped(request.query["wait"], to: 1...86_400) ?? 60
        switch request.query["error"] {
        case "mismatch":
            return passwordForm(
                c, error: "That email and password do not match. Check them and try again, or reset your password.",
                status: 401)
        case "locked":
            return passwordForm(c, error: "Too many tries. Wait \(Self.duration(wait)), then try again.", status: 429)
        case "empty": return passwordForm(c, error: "Enter your password.", status: 422)
        default: return passwordForm(c, error: nil)
        }
    }

    func passwordForm(_ c: Context, error: String?, status: Int = 200) -> Response {
        let email = c.flow.progress.email ?? ""
        let page = HostedPage.layout(
            "Enter your password", c.frame,
            [
                HostedPage.paragraph("Signing in as \(email)."),
                HostedPage.actions([
                    HostedPage.link("Not you? Use another email", "/authorize/sign-in?flow=\(c.flow.id)&other=1")
                ]),
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
                            "Password", name: "password", type: "password", error: error,
                            autocomplete: "current-password", autofocus: true, maxlength: 1024),
                        HostedPage.actions([HostedPage.button("Sign in")]),
                    ]),
                HostedPage.actions([HostedPage.link("Forgot your password?", "/authorize/reset?flow=\(c.flow.id)")]),
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
            case .session(let token, _):
                c.flow.progress.authenticatedHere = true
                c.flow.progress.accountChosen = true
                try flows.save(c.flow)
                return try advance(
                    c, token: token, request,
                    headers: [cookies.set(cookies.session, token), cookies.clear(cookies.pending)])
            case .secondFactor(let pending, _, _):
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
        let page = HostedPage.layout(
            "Choose an account", c.frame,
            [
                HostedPage.form(
                    "/authorize/account", c.frame,
                    [
                        HostedPage.actions([
                            HostedPage.button("Continue as \(caller.user.email)", name: "choice", value: "current"),
                            HostedPage.button("Use another account", name: "choice", value: "other", kind: "secondary"),
                        ])
                    ]),
                cancelForm(c),
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
            c.flow.progress.authenticatedHere = false
            try flows.save(c.flow)
            return Self.seeOther("/authorize/sign-in", flow: c.flow.id, headers: [cookies.clear(cookies.session)])
        }
        try flows.save(c.flow)
        return try advance(c, token: HostedCookies.value(cookies.session, in: request), request)
    }

    /// The "Cancel and return to the app" form under every step.
    func cancelForm(_ c: Context) -> HTML {
        HostedPage.form(
            "/authorize/cancel", c.frame, [HostedPage.button("Cancel and return to \(c.client.name)", kind: "link")])
    }

    /// "2 minutes", "30 seconds".
    static func duration(_ seconds: Int) -> String {
        // The figure may come from a URL (an error's `wait=`): clamped, so no value can overflow.
        let seconds = min(max(seconds, 0), 86_400)
        return seconds >= 90 ? "\((seconds + 59) / 60) minutes" : seconds <= 1 ? "a second" : "\(seconds) seconds"
    }

    /// A whole number from a URL, clamped to `range` (nil when absent or not a number).
    static func clamped(_ text: String?, to range: ClosedRange<Int>) -> Int? {
        guard let text, text.count <= 9, let value = Int(text) else { return nil }
        return min(max(value, range.lowerBound), range.upperBound)
    }
}
