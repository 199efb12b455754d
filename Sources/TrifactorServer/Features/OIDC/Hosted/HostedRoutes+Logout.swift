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
    }

    /// Reads and checks a logout request; an error page when it names an address the client did not register.
    func logoutRequest(_ p: [String: String]) throws -> Result<LogoutRequest, LogoutRefusal> {
        var request = LogoutRequest(state: p["state"])
        var clientID = p["client_id"]
        if let hint = p["id_token_hint"] {
            // §2: an expired hint is still a hint; one this provider did not sign is refused.
            guard let (subject, audience, _) = minter.hintedSubject(hint, clientID: nil) else {
                return .failure(LogoutRefusal("The app sent a sign-out request this server cannot check."))
            }
            if let clientID, clientID != audience {
                return .failure(LogoutRefusal("The sign-out request names two different apps."))
            }
            request.hintedSubject = subject
            clientID = audience
        }
        if let clientID {
            request.client = try flows.transactions.read { try ClientRepository.find(clientID, on: $0) }
        }
        if let uri = p["post_logout_redirect_uri"] {
            // §3: only an exactly registered address, and only for a client that is known.
            guard let client = request.client, client.postLogoutRedirectURIs.contains(uri) else {
                return .failure(LogoutRefusal("The app asked to return to an address it has not registered."))
            }
            request.redirect = uri
        }
        return .success(request)
    }

    struct LogoutRefusal: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// `GET` and `POST /logout`: with a valid hint for the signed-in user, signs out at once; otherwise asks.
    func logout(_ request: Request) throws -> Response {
        let p = request.method == "POST" ? Form(request.body).fields : request.query
        let frame = HostedPage.Frame(brand: brand)
        let checked: LogoutRequest
        switch try logoutRequest(p) {
        case .failure(let refusal):
            return HostedPage.response(
                HostedPage.layout("This sign-out link does not work", frame, [HostedPage.paragraph(refusal.reason)]),
                frame, status: 400)
        case .success(let value): checked = value
        }
        let token = HostedCookies.value(cookies.session, in: request)
        let session = try flows.session(token: token, client: AuditContext(request))
        if let (caller, _) = session, checked.hintedSubject == nil || checked.hintedSubject != caller.user.id.raw {
            return logoutConfirmation(request, checked, email: caller.user.email)
        }
        if let (caller, _) = session { try signOut(caller, request) }
        var response = loggedOut(checked)
        // A self-registered client's address without a valid hint: a link the user follows, not a redirect.
        if checked.client?.registeredBy == .dynamic, checked.hintedSubject == nil,
            let location = response.header("Location"), let client = checked.client
        {
            var page = leaving(to: location, client: client.name)
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
        if form["decision"] == "stay" {
            let frame = HostedPage.Frame(
                clientName: checked.client?.name, brand: brand, footer: "\(brand): you stay signed in.")
            var body = [HostedPage.paragraph("You are still signed in. You can close this page.")]
            if let client = checked.client,
                let site = (checked.redirect ?? client.redirectURIs.first).flatMap(HostedPage.origin)
            {
                body.append(
                    HostedPage.actions([
                        HostedPage.link("Return to \(client.name)", site + "/", class: "button primary")
                    ]))
            }
            return HostedPage.response(HostedPage.layout("You are still signed in", frame, body), frame)
        }
        if let (caller, _) = try flows.session(
            token: HostedCookies.value(cookies.session, in: request), client: AuditContext(request))
        {
            try signOut(caller, request)
        }
        return loggedOut(checked)
    }

    private func logoutConfirmation(_ request: Request, _ checked: LogoutRequest, email: String) -> Response {
        let (browser, headers) = browserCookie(request)
        let frame = HostedPage.Frame(
            clientName: checked.client?.name, logoURI: checked.client?.logoURI, brand: brand,
            csrf: HostedCookies.csrf(browser: browser, flowID: "logout"), formTarget: checked.redirect,
            footer: "Signing out of \(brand).")
        var fields: [HTML] = [HostedPage.hidden("csrf", frame.csrf ?? "")]
        if let id = checked.client?.id { fields.append(HostedPage.hidden("client_id", id)) }
        if let uri = checked.redirect { fields.append(HostedPage.hidden("post_logout_redirect_uri", uri)) }
        if let state = checked.state { fields.append(HostedPage.hidden("state", state)) }
        let page = HostedPage.layout(
            "Sign out?", frame,
            [
                HostedPage.paragraph("You are signed in to \(brand) as \(email). Signing out ends it in this browser."),
                .element(
                    "form", ["method": "post", "action": "/logout/confirm"],
                    fields + [
                        HostedPage.actions([
                            HostedPage.button("Sign out", name: "decision", value: "out"),
                            HostedPage.button("Stay signed in", name: "decision", value: "stay", kind: "secondary"),
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

    private func loggedOut(_ checked: LogoutRequest) -> Response {
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
        let frame = HostedPage.Frame(clientName: checked.client?.name, brand: brand, footer: "\(brand): signed out.")
        return HostedPage.response(
            HostedPage.layout(
                "You are signed out", frame,
                [HostedPage.paragraph("You are signed out of \(brand) in this browser. You can close this page.")]),
            frame, headers: clear)
    }
}
