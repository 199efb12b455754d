import API
import Core
import Foundation
import HTTP
import WebUI

extension HostedRoutes {
    /// `POST /authorize/passkey/options`: a discoverable-passkey challenge for the hosted script (JSON for the
    /// script alone; the user never sees it). The same challenge store and per-address limit as the API's.
    func passkeyOptions(_ request: Request) throws -> Response {
        let form = Form(request.body)
        guard try context(request, form: form) != nil else { return Response(status: 403) }
        do {
            let options = try passwordless.passkeyOptions(client: AuditContext(request))
            return .json(["options": options])
        } catch CommonFailure.rateLimited(let wait) {
            return Response(status: 429, headers: [("Retry-After", String(wait))])
        }
    }

    /// `POST /authorize/passkey`: a passkey without a password (a passkey with user verification is both
    /// factors, so the session is at the hardware-key level).
    func passkeySignIn(_ request: Request) throws -> Response {
        let form = Form(request.body)
        guard var c = try context(request, form: form) else { return lostFlow(request) }
        let t = c.frame.text
        guard let credential = Self.credential(form) else {
            return emailForm(c, email: c.flow.progress.email, error: t("passkey.no_answer"), status: 422)
        }
        do {
            let (token, session) = try passwordless.signIn(with: credential, client: AuditContext(request))
            c.flow.progress.authenticatedHere = true
            c.flow.progress.accountChosen = true
            return try advance(
                c, token: token, request, unsaved: true,
                headers: signedIn(request, token: token, session: session))
        } catch SignInFailure.passkeyRefused, SecondFactorFailure.invalidCode {
            return emailForm(c, email: c.flow.progress.email, error: t("passkey.refused"), status: 401)
        } catch CommonFailure.rateLimited(let wait) {
            return emailForm(
                c, email: c.flow.progress.email, error: t("common.too_many_tries", ["wait": t.duration(wait)]),
                status: 429)
        }
    }

    /// The assertion the hosted script put in the form, as the API reads it.
    static func credential(_ form: Form) -> CredentialJSON? {
        guard let text = form.raw("assertion"), !text.isEmpty, text.utf8.count <= 16 * 1024 else { return nil }
        return try? JSONDecoder().decode(CredentialJSON.self, from: Data(text.utf8))
    }

    /// The passkey button of a second step: the challenge is issued as the page is drawn, its options ride on the
    /// button, and the script posts the assertion in the form.
    func passkeyStep(_ c: Context, _ step: SecondStep, _ f: SessionService.Hint, request: Request) -> HTML {
        let issued: ChallengeIssued?
        switch step {
        case .signIn(let pending):
            issued = try? secondFactors.signInChallenge(
                pendingCredential: pending, factorID: f.factorID,
                client: Self.audit(request, for: c.client, c.frame.text)
            ).0
        case .stepUp(let caller):
            issued = try? secondFactors.stepUpChallenge(
                caller, factorID: f.factorID, client: Self.audit(request, for: c.client, c.frame.text))
        }
        let t = c.frame.text
        guard case .passkey(let options)? = issued,
            let json = try? JSONEncoder().encode(options)
        else {
            return .element("p", ["class": "error", "role": "alert"], [.text(t("passkey.unavailable"))])
        }
        return passkeyForm(
            "/authorize/second-factor", c, factorID: f.factorID.raw, options: json,
            sentence: t("passkey.use", ["passkey": f.displayName ?? t("common.your_passkey")]),
            button: t("passkey.button"))
    }

    /// A passkey's form: its challenge's options ride on the button, and the hosted script posts the assertion to
    /// `action` (a second step, a payment).
    func passkeyForm(
        _ action: String, _ c: Context, factorID: String, options: Data, sentence: String, button: String
    ) -> HTML {
        HostedPage.form(
            action, c.frame,
            [
                HostedPage.hidden("factor", factorID),
                .element("input", ["type": "hidden", "name": "assertion", "data-assertion": ""]),
                HostedPage.paragraph(sentence),
                .element(
                    "p", ["class": "error", "role": "alert", "data-passkey-error": "", "hidden": ""],
                    [.text(c.frame.text("code.passkey"))]),
                HostedPage.actions([
                    .element(
                        "button",
                        [
                            "type": "button", "class": "primary", "data-passkey": "get",
                            "data-options": String(decoding: options, as: UTF8.self),
                        ], [.text(button)])
                ]),
            ])
    }
}
