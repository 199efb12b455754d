import Core
import Crypto
import Foundation
import HTTP
import WebUI

extension HostedRoutes {
    /// A logout request (OpenID Connect RP-Initiated Logout 1.0 §2), checked.
    struct LogoutRequest {
        var client: OIDCClient?
        /// The user the ID token hint names, when it is valid (expired or not).
        var hintedSubject: String?
        var redirect: String?
        var state: String?
        /// The languages the app asked for (§2 `ui_locales`), kept for the confirmation's answer.
        var uiLocales: [String] = []
    }

    /// Reads and checks a logout request; an error page when it names an address the client did not register.
    func logoutRequest(_ p: [String: String]) throws -> Result<LogoutRequest, LogoutRefusal> {
        var request = LogoutRequest(
            state: p["state"], uiLocales: (p["ui_locales"] ?? "").split(separator: " ").prefix(10).map(String.init))
        var clientID = p["client_id"]
        if let hint = p["id_token_hint"] {
            // §2: an expired hint is still a hint; one this provider did not sign is refused.
            guard let (subject, audience, _) = minter.hintedSubject(hint, clientID: nil) else {
                return .failure(LogoutRefusal("logout.refused.hint"))
            }
            if let clientID, clientID != audience {
                return .failure(LogoutRefusal("logout.refused.two_apps"))
            }
            request.hintedSubject = subject
            clientID = audience
        }
        if let clientID {
            request.client = try flows.transactions.read { try ClientRepository.managed(clientID, on: $0) }
        }
        if let uri = p["post_logout_redirect_uri"] {
            // §3: only an exactly registered address, and only for a client that is known.
            guard let client = request.client, client.postLogoutRedirectURIs.contains(uri) else {
                return .failure(LogoutRefusal("logout.refused.address"))
            }
            request.redirect = uri
        }
        return .success(request)
    }

    struct LogoutRefusal: Error {
        /// The sentence's key in the pages' texts.
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// `GET` and `POST /logout`: with a valid hint for the signed-in user, signs out at once; otherwise asks.
    func logout(_ request: Request) throws -> Response {
        let p = request.method == "POST" ? Form(request.body).fields : request.query
        let t = texts(request, uiLocales: (p["ui_locales"] ?? "").split(separator: " ").prefix(10).map(String.init))
        let frame = HostedPage.Frame(text: t, brand: brand)
        let checked: LogoutRequest
        switch try logoutRequest(p) {
        case .failure(let refusal):
            return HostedPage.response(
                HostedPage.layout(t("logout.refused.title"), frame, [HostedPage.paragraph(t(refusal.reason))]),
                frame, status: 400)
        case .success(let value): checked = value
        }
        let token = HostedCookies.value(cookies.session, in: request)
        let session = try flows.session(token: token, client: AuditContext(request))
        if let (caller, _) = session, checked.hintedSubject == nil || checked.hintedSubject != caller.user.id.raw {
            return logoutConfirmation(request, checked, email: caller.user.email, t)
        }
        if let (caller, _) = session { try signOut(caller, request) }
        var response = loggedOut(checked, t)
        // A self-registered client's address without a valid hint: a link the user follows, not a redirect.
        if checked.client?.registeredBy == .dynamic, checked.hintedSubject == nil,
            let location = response.header("Location"), let client = checked.client
        {
            var page = leaving(to: location, client: client.name, t)
            page.status = 200
            page.headers += response.headers.filter { $0.name == "Set-Cookie" }
            response = page
        }
        return response
    }

    /// `POST /logout/confirm`.
    func logoutConfirmed(_ request: Request) throws -> Response {
        let form = Form(request.body)
        guard let browser = HostedCookies.value(cookies.browser, in: request),
            ConstantTime.equals(form["csrf"] ?? "", HostedCookies.csrf(browser: browser, flowID: "logout"))
        else { return lostFlow(request) }
        guard case .success(let checked) = try logoutRequest(form.fields.filter { $0.key != "id_token_hint" }) else {
            return lostFlow(request)
        }
        let t = texts(request, uiLocales: checked.uiLocales)
        if form["decision"] == "stay" {
            let frame = HostedPage.Frame(
                text: t, clientName: checked.client?.name, brand: brand,
                footer: t("logout.stay.footer", ["brand": brand]))
            var body = [
                HostedPage.paragraph(t("logout.stay.body")),
                .element("p", [:], [HostedPage.link(t("security.link"), "/account")]),
            ]
            if let client = checked.client,
                let site = (checked.redirect ?? client.redirectURIs.first).flatMap(HostedPage.origin)
            {
                body.append(
                    HostedPage.actions([
                        HostedPage.link(
                            t("common.return_to", ["client": client.name]), site + "/", class: "button primary")
                    ]))
            }
            return HostedPage.response(HostedPage.layout(t("logout.stay.title"), frame, body), frame)
        }
        if let (caller, _) = try flows.session(
            token: HostedCookies.value(cookies.session, in: request), client: AuditContext(request))
        {
            try signOut(caller, request)
        }
        return loggedOut(checked, t)
    }

    private func logoutConfirmation(_ request: Request, _ checked: LogoutRequest, email: String, _ t: HostedText)
        -> Response
    {
        let (browser, headers) = browserCookie(request)
        let frame = HostedPage.Frame(
            text: t, clientName: checked.client?.name, logoURI: checked.client?.logoURI, brand: brand,
            csrf: HostedCookies.csrf(browser: browser, flowID: "logout"), formTarget: checked.redirect,
            footer: t("logout.confirm.footer", ["brand": brand]))
        var fields: [HTML] = [HostedPage.hidden("csrf", frame.csrf ?? "")]
        if let id = checked.client?.id { fields.append(HostedPage.hidden("client_id", id)) }
        if let uri = checked.redirect { fields.append(HostedPage.hidden("post_logout_redirect_uri", uri)) }
        if let state = checked.state { fields.append(HostedPage.hidden("state", state)) }
        if !checked.uiLocales.isEmpty {
            fields.append(HostedPage.hidden("ui_locales", checked.uiLocales.joined(separator: " ")))
        }
        let page = HostedPage.layout(
            t("logout.confirm.title"), frame,
            [
                HostedPage.paragraph(t("logout.confirm.body", ["brand": brand, "email": email])),
                .element(
                    "form", ["method": "post", "action": "/logout/confirm"],
                    fields + [
                        HostedPage.actions([
                            HostedPage.button(t("logout.confirm.out"), name: "decision", value: "out"),
                            HostedPage.button(
                                t("logout.confirm.stay"), name: "decision", value: "stay", kind: "secondary"),
                        ])
                    ]),
            ])
        return HostedPage.response(page, frame, headers: headers)
    }

    /// Ends the browser's session; the provider's session-end hook revokes the grants that lived on it (not those
    /// for offline use) and tells the relying parties that asked for back-channel logout.
    private func signOut(_ caller: Caller, _ request: Request) throws {
        try sessions.signOut(caller, client: AuditContext(request))
    }

    private func loggedOut(_ checked: LogoutRequest, _ t: HostedText) -> Response {
        let clear = [cookies.clear(cookies.session), cookies.clear(cookies.pending)]
        if let uri = checked.redirect {
            var parts = URLComponents(string: uri) ?? URLComponents()
            if let state = checked.state {
                parts.percentEncodedQuery =
                    ((parts.percentEncodedQuery.map { [$0] } ?? []) + ["state=\(Self.formEncode(state))"])
                    .joined(separator: "&")
            }
            return Response(status: 303, headers: [("Location", parts.string ?? uri)] + clear)
        }
        let frame = HostedPage.Frame(
            text: t, clientName: checked.client?.name, brand: brand, footer: t("logout.done.footer", ["brand": brand]))
        return HostedPage.response(
            HostedPage.layout(
                t("logout.done.title"), frame, [HostedPage.paragraph(t("logout.done.body", ["brand": brand]))]),
            frame, headers: clear)
    }
}
