import Core
import Foundation
import HTTP
import WebUI

extension HostedRoutes {
    /// `GET /authorize/consent`: what the client will see, the first time the user meets it.
    func consentPage(_ request: Request) throws -> Response {
        guard let c = try context(request) else { return lostFlow() }
        guard
            let (caller, _) = try flows.session(
                token: HostedCookies.value(cookies.session, in: request), client: AuditContext(request))
        else { return Self.seeOther("/authorize/sign-in", flow: c.flow.id) }
        let items = c.flow.request.scopes.map(HostedPage.describe(scope:))
        let page = HostedPage.layout(
            "Allow \(c.client.name) to use your account?", c.frame,
            [
                HostedPage.paragraph("Signed in as \(caller.user.email). \(c.client.name) will be able to:"),
                .element("ul", [:], items.map { .element("li", [:], [.text($0)]) }),
                c.flow.request.resource.map { HostedPage.paragraph("The access is for \($0).") } ?? .empty,
                HostedPage.paragraph(
                    "It never sees your password or your second factor. You can remove its access at any time.",
                    class: "muted"),
                HostedPage.form(
                    "/authorize/consent", c.frame,
                    [
                        HostedPage.actions([
                            HostedPage.button("Allow", name: "decision", value: "allow"),
                            HostedPage.button("Deny", name: "decision", value: "deny", kind: "secondary"),
                        ])
                    ]),
            ])
        return HostedPage.response(page, c.frame)
    }

    /// `POST /authorize/consent`.
    func consentSubmitted(_ request: Request) throws -> Response {
        let form = Form(request.body)
        guard let c = try context(request, form: form) else { return lostFlow() }
        let token = HostedCookies.value(cookies.session, in: request)
        guard let (_, session) = try flows.session(token: token, client: AuditContext(request)) else {
            return Self.seeOther("/authorize/sign-in", flow: c.flow.id)
        }
        guard form["decision"] == "allow" else {
            return answer(
                c.flow.back, ["error": "access_denied", "error_description": "The user did not allow access."])
        }
        try flows.consent(c.flow, session: session, client: AuditContext(request))
        var next = c
        next.flow.progress.consentedHere = true
        return try advance(next, token: token, request)
    }

    /// `GET /authorize/add-factor`: the client asks for a second factor the user has not set up.
    func addFactorPage(_ request: Request) throws -> Response {
        guard let c = try context(request) else { return lostFlow() }
        let page = HostedPage.layout(
            "Add a second factor first", c.frame,
            [
                HostedPage.paragraph(
                    "\(c.client.name) asks for more than a password: a code from an authenticator app or your phone, a passkey, or an approval on your device."
                ),
                HostedPage.paragraph(
                    "Add one in your account's security settings, then come back and sign in again. It takes a minute and protects your account everywhere."
                ),
                cancelForm(c),
            ])
        return HostedPage.response(page, c.frame)
    }
}
