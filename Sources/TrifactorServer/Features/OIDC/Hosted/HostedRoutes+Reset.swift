import Core
import Foundation
import HTTP
import WebUI

/// "Forgot your password?" on the hosted pages: the API's password reset
/// (one code emailed, the same answer for any address, the account's second
/// factor before the new password), then back to signing in.
extension HostedRoutes {
    /// `GET /authorize/reset`: the address to send the code to.
    func resetPage(_ request: Request) throws -> Response {
        guard let c = try context(request) else { return lostFlow(request) }
        return resetEmailForm(c, email: c.flow.progress.email, error: nil)
    }

    private func resetEmailForm(_ c: Context, email: String?, error: String?, status: Int = 200) -> Response {
        let t = c.frame.text
        let page = HostedPage.layout(
            t("reset.title"), c.frame,
            [
                HostedPage.paragraph(t("reset.body")),
                HostedPage.form(
                    "/authorize/reset", c.frame,
                    [
                        HostedPage.field(
                            t("common.email"), name: "email", type: "email", value: email, error: error,
                            autocomplete: "username", autofocus: true, maxlength: 254),
                        HostedPage.actions([HostedPage.button(t("reset.send"))]),
                    ]),
                HostedPage.actions([HostedPage.link(t("reset.back"), "/authorize/sign-in?flow=\(c.flow.id)")]),
            ])
        return HostedPage.response(page, c.frame, status: status)
    }

    /// `POST /authorize/reset`: asks for the code (the same answer whether or not the address has an account).
    func resetRequested(_ request: Request) throws -> Response {
        let form = Form(request.body)
        guard var c = try context(request, form: form) else { return lostFlow(request) }
        let email = form["email"] ?? c.flow.progress.email ?? ""
        do {
            try resets.request(email: email, client: Self.audit(request, for: c.client, c.frame.text))
        } catch CommonFailure.invalidFields {
            return resetEmailForm(c, email: email, error: c.frame.text("common.email.invalid"), status: 422)
        } catch CommonFailure.rateLimited(let wait) {
            let t = c.frame.text
            return resetEmailForm(c, email: email, error: t("reset.limit", ["wait": t.duration(wait)]), status: 429)
        }
        c.flow.progress.email = email
        try flows.save(c.flow)
        return Self.seeOther("/authorize/reset/code", flow: c.flow.id)
    }

    /// `GET /authorize/reset/code`.
    func resetCodePage(_ request: Request) throws -> Response {
        guard let c = try context(request) else { return lostFlow(request) }
        guard c.flow.progress.email != nil else { return Self.seeOther("/authorize/reset", flow: c.flow.id) }
        return resetCodeForm(c, error: nil)
    }

    private func resetCodeForm(_ c: Context, error: String?, status: Int = 200) -> Response {
        let email = c.flow.progress.email ?? ""
        let t = c.frame.text
        let page = HostedPage.layout(
            t("reset.code.title"), c.frame,
            [
                HostedPage.paragraph(t("reset.code.body", ["email": email])),
                HostedPage.form(
                    "/authorize/reset/code", c.frame,
                    [
                        HostedPage.field(
                            t("reset.code.label"), name: "code", error: error, autocomplete: "one-time-code",
                            inputmode: "numeric", autofocus: true, maxlength: 32),
                        HostedPage.actions([HostedPage.button(t("common.continue"))]),
                    ]),
                HostedPage.form(
                    "/authorize/reset", c.frame,
                    [
                        HostedPage.hidden("email", email),
                        HostedPage.actions([HostedPage.button(t("code.send_new"), kind: "secondary")]),
                    ]),
                HostedPage.actions([
                    HostedPage.link(t("reset.other_email"), "/authorize/reset?flow=\(c.flow.id)"),
                    HostedPage.link(t("reset.back"), "/authorize/sign-in?flow=\(c.flow.id)"),
                ]),
            ])
        return HostedPage.response(page, c.frame, status: status)
    }

    /// `POST /authorize/reset/code`: a right code gives the reset credential (in a cookie of its own).
    func resetCodeSubmitted(_ request: Request) throws -> Response {
        let form = Form(request.body)
        guard let c = try context(request, form: form) else { return lostFlow(request) }
        guard let email = c.flow.progress.email else { return Self.seeOther("/authorize/reset", flow: c.flow.id) }
        do {
            let verified = try resets.verify(
                email: email, code: TypedCode.normalize(form["code"] ?? ""), client: AuditContext(request))
            return Self.seeOther(
                "/authorize/reset/password", flow: c.flow.id,
                headers: [cookies.set(cookies.reset, verified.credential, maxAge: 900)])
        } catch CommonFailure.rateLimited(let wait) {
            let t = c.frame.text
            return resetCodeForm(c, error: t("common.too_many_tries", ["wait": t.duration(wait)]), status: 429)
        } catch CommonFailure.invalidFields {
            return resetCodeForm(c, error: c.frame.text("reset.code.shape"), status: 422)
        } catch AccountFailure.invalidCode {
            return resetCodeForm(c, error: c.frame.text("reset.code.wrong"), status: 422)
        }
    }

    /// The reset this browser holds and the factors it must prove (those the hosted pages can ask for by code).
    private func heldReset(_ request: Request) throws -> (credential: String, factors: [SessionService.Hint])? {
        guard let credential = HostedCookies.value(cookies.reset, in: request) else { return nil }
        let now = flows.clock.now().millis
        return try flows.transactions.read { db in
            guard let holder = try PasswordResetCodes.holder(of: credential, now: now, on: db) else { return nil }
            return (credential, try secondFactors.hints(holder.userID, on: db))
        }
    }

    /// `GET /authorize/reset/password[?factor=ID][&sent=1]`.
    func resetPasswordPage(_ request: Request) throws -> Response {
        guard let c = try context(request) else { return lostFlow(request) }
        guard let (_, hints) = try heldReset(request) else {
            return Self.seeOther("/authorize/reset", flow: c.flow.id)
        }
        return resetPasswordForm(
            c, hints: hints, chosen: request.query["factor"], sent: request.query["sent"] == "1", error: nil)
    }

    private func resetPasswordForm(
        _ c: Context, hints: [SessionService.Hint], chosen: String?, sent: Bool, error: String?, status: Int = 200,
        codeError: String? = nil
    ) -> Response {
        let usable = hints.filter { $0.kind == .totp || $0.kind == .phone || $0.kind == .recoveryCode }
        let factor = usable.first { $0.factorID.raw == chosen } ?? usable.first
        let t = c.frame.text
        var fields: [HTML] = [
            HostedPage.field(
                t("reset.password.label"), name: "password", type: "password", error: error,
                hint: t("reset.password.hint", ["min": t.number(resets.passwordPolicy.minimumLength)]),
                autocomplete: "new-password", autofocus: true, maxlength: 1024)
        ]
        var body: [HTML] = []
        if let factor {
            fields.insert(HostedPage.hidden("factor", factor.factorID.raw), at: 0)
            if factor.kind == .phone && !sent {
                // No password field yet: a refused text says why above its button.
                if let error { body.append(.element("p", ["class": "error", "role": "alert"], [.text(error)])) }
                body.append(
                    HostedPage.form(
                        "/authorize/reset/send", c.frame,
                        [
                            HostedPage.hidden("factor", factor.factorID.raw),
                            HostedPage.paragraph(
                                t("reset.prove", ["phone": factor.maskedPhone ?? t("common.your_phone")])),
                            HostedPage.actions([HostedPage.button(t("code.text_me"))]),
                        ]))
            } else {
                fields.append(
                    HostedPage.field(
                        factor.kind == .totp
                            ? t("code.totp.label")
                            : factor.kind == .phone ? t("code.sms.label") : t("code.recovery.label"),
                        name: "code", error: codeError, autocomplete: "one-time-code",
                        inputmode: factor.kind == .recoveryCode ? nil : "numeric", maxlength: 64))
            }
        } else if !hints.isEmpty {
            body.append(
                .element(
                    "p", ["class": "warning"],
                    [.text(t("reset.passkey_only"))]))
        }
        if factor == nil && !hints.isEmpty || factor?.kind == .phone && !sent {
            // No password field before the factor can be proven.
        } else {
            body.append(
                HostedPage.form(
                    "/authorize/reset/password", c.frame,
                    fields + [HostedPage.actions([HostedPage.button(t("reset.password.button"))])]
                ))
        }
        let others = usable.filter { $0.factorID != factor?.factorID }
        if !others.isEmpty {
            body.append(
                .element(
                    "ul", ["class": "factors"],
                    others.map { f in
                        .element(
                            "li", [:],
                            [
                                HostedPage.link(
                                    Self.label(f, t),
                                    "/authorize/reset/password?flow=\(c.flow.id)&factor=\(f.factorID.raw)")
                            ])
                    }))
        }
        body.append(HostedPage.actions([HostedPage.link(t("reset.back"), "/authorize/sign-in?flow=\(c.flow.id)")]))
        return HostedPage.response(HostedPage.layout(t("reset.password.title"), c.frame, body), c.frame, status: status)
    }

    /// `POST /authorize/reset/send`: the text of the reset's phone factor.
    func resetSend(_ request: Request) throws -> Response {
        let form = Form(request.body)
        guard let c = try context(request, form: form) else { return lostFlow(request) }
        guard let (credential, hints) = try heldReset(request) else {
            return Self.seeOther("/authorize/reset", flow: c.flow.id)
        }
        guard let factor = hints.first(where: { $0.factorID.raw == form["factor"] }) else {
            return Self.seeOther("/authorize/reset/password", flow: c.flow.id)
        }
        do {
            _ = try resets.challenge(
                credential: credential, factorID: factor.factorID,
                client: Self.audit(request, for: c.client, c.frame.text))
        } catch let failure as SecondFactorFailure {
            return resetPasswordForm(
                c, hints: hints, chosen: factor.factorID.raw, sent: false, error: Self.sentence(failure, c.frame.text),
                status: 429)
        } catch CommonFailure.rateLimited(let wait) {
            // Too many texts to this number or from here: say how long to wait, on the same page (not a 503).
            return resetPasswordForm(
                c, hints: hints, chosen: factor.factorID.raw, sent: false,
                error: c.frame.text("code.limit", ["wait": c.frame.text.duration(max(1, wait))]), status: 429)
        } catch PasswordResetFailure.invalidCredential {
            // The reset ran out of time: start it again.
            return Self.seeOther("/authorize/reset", flow: c.flow.id)
        }
        return Self.seeOther(
            "/authorize/reset/password", flow: c.flow.id, extra: "&factor=\(factor.factorID.raw)&sent=1")
    }

    /// `POST /authorize/reset/password` (on the hashing pool): the new password, with the factor's code.
    func resetPasswordSubmitted(_ request: Request) throws -> Response {
        let form = Form(request.body)
        guard var c = try context(request, form: form) else { return lostFlow(request) }
        guard let (credential, hints) = try heldReset(request) else {
            return Self.seeOther("/authorize/reset", flow: c.flow.id)
        }
        let factor = hints.first { $0.factorID.raw == form["factor"] }
        let code = (form["code"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        let t = c.frame.text
        let again = { (error: String, status: Int) in
            self.resetPasswordForm(
                c, hints: hints, chosen: factor?.factorID.raw, sent: factor?.kind == .phone, error: error,
                status: status)
        }
        // A refused code is marked on the code field; the password is never sent back, so the page says to retype it.
        let wrongCode = { (sentence: String) in
            self.resetPasswordForm(
                c, hints: hints, chosen: factor?.factorID.raw, sent: factor?.kind == .phone,
                error: t("reset.password.retype"), status: 422,
                codeError: sentence)
        }
        do {
            try resets.complete(
                credential: credential, newPassword: form.raw("password") ?? "", factorID: factor?.factorID,
                answer: factor == nil || code.isEmpty ? nil : .proof(.code(TypedCode.normalize(code))),
                client: AuditContext(request))
        } catch CommonFailure.invalidFields(let fields) {
            return again(Self.passwordSentence(fields.first?.violation, policy: resets.passwordPolicy, t), 422)
        } catch SecondFactorFailure.secondFactorRequired {
            return wrongCode(t("reset.code_required"))
        } catch PasswordResetFailure.invalidCredential {
            return Self.seeOther("/authorize/reset", flow: c.flow.id, headers: [cookies.clear(cookies.reset)])
        } catch let failure as SecondFactorFailure {
            return wrongCode(Self.sentence(failure, t))
        }
        // Every session ended with the old password; the user signs in with the new one.
        c.flow.progress.authenticatedHere = false
        try flows.save(c.flow)
        return Self.seeOther(
            "/authorize/sign-in", flow: c.flow.id, extra: "&reset=1",
            headers: [cookies.clear(cookies.reset), cookies.clear(cookies.session), cookies.clear(cookies.pending)])
    }

    /// Why a new password was refused, in the user's words.
    static func passwordSentence(_ violation: PasswordPolicy.Violation?, policy: PasswordPolicy, _ t: HostedText)
        -> String
    {
        switch violation {
        case .tooShort: t("password.too_short", ["min": t.number(policy.minimumLength)])
        case .tooLong: t("password.too_long", ["max": t.number(policy.maximumLength)])
        case .common: t("password.common")
        case .contextual: t("password.contains_email")
        case nil: t("password.other")
        }
    }
}
