import Core
import Crypto
import Foundation
import HTTP
import WebUI

extension HostedRoutes {
    /// `GET` and `POST /authorize` (OIDC Core §3.1.2.1: both must be supported).
    func authorize(_ request: Request) throws -> Response {
        // A HEAD (a link preview, a scanner) starts nothing: it would spend a pushed request_uri meant for the user.
        if request.method == "HEAD" {
            return Response(
                status: 200, headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store")])
        }
        let parameters: [String: String]
        let repeated: Set<String>
        if request.method == "POST" {
            let form = Form(request.body)
            parameters = form.fields
            repeated = form.repeated
        } else {
            parameters = request.query
            repeated = Self.repeatedNames(request.rawQuery)
        }
        return try begin(parameters, repeated: repeated, request)
    }

    /// Starts the flow of an authorization request's `parameters` (`repeated`: the names sent more than once) and
    /// sends the browser to its first page. `own`: the request is one of this server's own pages' (`OwnPages`).
    func begin(_ parameters: [String: String], repeated: Set<String>, _ request: Request, own: Bool = false) throws
        -> Response
    {
        // Before the request is read, its pages speak the language it asks for (OIDC Core §3.1.2.1 `ui_locales`).
        let uiLocales = (parameters["ui_locales"] ?? "").split(separator: " ").prefix(10).map(String.init)
        let t = texts(request, uiLocales: uiLocales)
        let frame = HostedPage.Frame(text: t, brand: brand)
        // This browser's cookie, made now when it has none: the flow is bound to it.
        let (browser, headers) = browserCookie(request)
        let start: FlowService.Start
        do {
            start = try flows.start(parameters, client: AuditContext(request), browser: browser, own: own)
        } catch CommonFailure.rateLimited(let wait) {
            return HostedPage.response(
                HostedPage.layout(
                    t("authorize.busy.title"), frame,
                    [HostedPage.paragraph(t("authorize.busy.body", ["wait": t.duration(wait)]))]),
                frame, status: 429, headers: [("Retry-After", String(wait))])
        }
        switch start {
        case .errorPage(let reason, let client, let site, let payment):
            let footer =
                if payment, let client { t("footer.paying", ["client": client, "brand": brand]) } else {
                    t("footer.sign_in", ["brand": brand])
                }
            let frame = HostedPage.Frame(text: t, clientName: client, brand: brand, footer: footer)
            return HostedPage.response(
                HostedPage.layout(
                    t(payment ? "authorize.broken.payment.title" : "authorize.broken.title"), frame,
                    [
                        // The reason is for the app's owner, in the language of the specifications it quotes.
                        .element("p", ["lang": t.language == "en" ? nil : "en", "dir": "ltr"], [.text(reason)]),
                        HostedPage.paragraph(t("authorize.broken.body")),
                        // A pushed link already used (Back, a reload, another tab): the app it came from, one click away.
                        client.flatMap { name in
                            site.map { site in
                                HostedPage.actions([
                                    HostedPage.link(
                                        t("common.return_to", ["client": name]), site + "/", class: "button primary")
                                ])
                            }
                        } ?? .empty,
                    ]), frame, status: 400)
        case .redirectError(let error, let back, let client):
            let answer = answer(back, ["error": error.code, "error_description": error.description], t)
            guard client.registeredBy == .dynamic, back.mode == .query, let location = answer.header("Location") else {
                return answer
            }
            return leaving(to: location, client: client.name, t)
        case .flow(let flow, let client):
            // RFC 6749 §3.1: parameters must not be sent more than once.
            if let name = repeated.sorted().first {
                let back = ClientRedirect(
                    uri: flow.request.redirectURI, mode: flow.request.responseMode, state: flow.request.state)
                try flows.end(flow.id)
                let refusal = answer(
                    back, ["error": "invalid_request", "error_description": "\(name.prefix(40)) is repeated."], t)
                // As for every error of a self-registered client: a link, not a redirect.
                guard client.registeredBy == .dynamic, let location = refusal.header("Location") else { return refusal }
                return leaving(to: location, client: client.name, t)
            }
            let context = Context(
                flow: flow, client: client, browser: browser,
                frame: HostedPage.Frame(
                    text: t, clientName: client.name, logoURI: client.logoURI, brand: brand, flowID: flow.id,
                    csrf: HostedCookies.csrf(browser: browser, flowID: flow.id), formTarget: flow.request.redirectURI))
            var response = try advance(context, token: HostedCookies.value(cookies.session, in: request), request)
            response.headers += headers
            return response
        }
    }

    /// Where the flow goes next, from the browser's session (`token`, the SSO cookie or the session just made).
    /// `unsaved`: the flow's progress changed and is saved here, with the code when one is issued (one
    /// transaction fewer on the last step of a sign-in).
    func advance(
        _ c: Context, token: String?, _ request: Request, unsaved: Bool = false,
        headers: [(name: String, value: String)] = []
    ) throws -> Response {
        let found = try flows.session(token: token, client: AuditContext(request))
        var c = c
        var unsaved = unsaved
        if let (caller, _) = found, c.flow.progress.language != caller.user.locale {
            // The account's language for the pages that follow (when the client named none of ours); none when it
            // names none, so a language chosen by another account in this browser never carries over.
            c.flow.progress.language = caller.user.locale
            unsaved = true
        }
        let id = c.flow.id
        let step = try flows.next(c.flow, client: c.client, session: found?.1)
        // RFC 8628 §5.4: a device's sign-in always ends on its confirmation page, which names the device's client.
        if c.flow.progress.device != nil, step == .consent || step == .issueCode {
            if unsaved { try flows.save(c.flow) }
            return Self.seeOther(Self.deviceConfirmation, flow: id, headers: headers)
        }
        switch step {
        case .issueCode, .fail: break  // saved with the code; a failed flow ends here
        default: if unsaved { try flows.save(c.flow) }
        }
        var response: Response
        switch step {
        case .signIn: response = Self.seeOther("/authorize/sign-in", flow: id)
        case .chooseAccount: response = Self.seeOther("/authorize/account", flow: id)
        case .stepUp: response = Self.seeOther("/authorize/second-factor", flow: id)
        case .addSecondFactor: response = Self.seeOther("/authorize/add-factor", flow: id)
        case .consent: response = Self.seeOther("/authorize/consent", flow: id)
        case .approveDetails: response = Self.seeOther("/authorize/payment", flow: id)
        case .fail(let error):
            response = try refuse(c, error.code, error.description, request)
        case .issueCode where c.client.id == OwnPages.clientID:
            response = try returnToOwnPage(c)
        case .issueCode:
            guard let session = found?.1,
                let code = try flows.issueCode(
                    c.flow, session: session, saving: unsaved, client: AuditContext(request))
            else { return lostFlow(request) }
            response = answer(c.flow.back, ["code": code], c.frame.text)
        }
        response.headers += headers
        return response
    }

    /// Sends `parameters` (with `state` and `iss`) back to the client: a 303 to the redirect URI with them in
    /// its query, or a page that posts them (OAuth 2.0 Form Post Response Mode).
    func answer(_ back: ClientRedirect, _ parameters: [String: String], _ t: HostedText) -> Response {
        var all = parameters
        if let state = back.state { all["state"] = state }
        // RFC 9207 §2: the issuer goes back with every authorization response, errors included.
        all["iss"] = issuer
        let ordered = all.sorted { $0.key < $1.key }
        switch back.mode {
        case .query:
            var parts = URLComponents(string: back.uri) ?? URLComponents()
            parts.percentEncodedQuery =
                ((parts.percentEncodedQuery.map { [$0] } ?? [])
                + ordered.map { "\(Self.formEncode($0.key))=\(Self.formEncode($0.value))" }).joined(separator: "&")
            return Response(
                status: 303, headers: [("Location", parts.string ?? back.uri)])
        case .formPost:
            let frame = HostedPage.Frame(text: t, brand: brand, formTarget: back.uri, script: true)
            let page = HostedPage.layout(
                t("answer.title"), frame,
                [
                    .element(
                        "form", ["method": "post", "action": back.uri, "data-auto-submit": ""],
                        ordered.map { HostedPage.hidden($0.key, $0.value) } + [HostedPage.button(t("common.continue"))])
                ])
            return HostedPage.response(page, frame)
        }
    }

    /// A page with a link to an address a self-registered client named, instead of an automatic redirect: whoever
    /// can register a client cannot use this server to bounce people to their site unseen (RFC 9700 §4.11.2).
    func leaving(to location: String, client name: String, _ t: HostedText) -> Response {
        let host = URLComponents(string: location)?.host ?? location
        let frame = HostedPage.Frame(
            text: t, clientName: name, brand: brand, footer: t("footer.sign_in", ["brand": brand]))
        let page = HostedPage.layout(
            t("leaving.title", ["brand": brand]), frame,
            [
                HostedPage.paragraph(t("leaving.body", ["client": name])),
                HostedPage.paragraph(t("leaving.trust", ["host": host])),
                HostedPage.actions([
                    HostedPage.link(t("leaving.continue", ["host": host]), location, class: "button secondary")
                ]),
            ])
        return HostedPage.response(page, frame, status: 400)
    }

    /// `application/x-www-form-urlencoded` value encoding (RFC 6749 Appendix B).
    static func formEncode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    /// The names that appear more than once in a raw query string.
    static func repeatedNames(_ raw: String) -> Set<String> {
        var seen: Set<String> = []
        var repeated: Set<String> = []
        for pair in raw.split(separator: "&") {
            let name = String(pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0])
            let decoded = name.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? name
            if !seen.insert(decoded).inserted { repeated.insert(decoded) }
        }
        return repeated
    }

    /// `POST /authorize/cancel`: the user declined; the client hears `access_denied`.
    func cancel(_ request: Request) throws -> Response {
        guard let c = try context(request, form: Form(request.body)) else { return lostFlow(request) }
        guard let details = c.flow.request.authorizationDetails else {
            return try refuse(c, "access_denied", "The user cancelled the sign-in.", request)
        }
        // A payment left with Cancel: its approval ends, and a push still waiting on the device is withdrawn.
        if c.flow.progress.detailsApproved != true {
            for id in [c.flow.progress.detailsAuthorization, c.flow.progress.detailsPushAuthorization].compactMap(
                \.self)
            {
                try authorizations.withdraw(AuthorizationID(id), action: details.action(client: c.client.id))
            }
        }
        return try refuse(
            c, "access_denied",
            details.payment == nil ? "The user declined the request." : "The user declined the payment.")
    }

    /// Answers the client with an error and ends the flow: one request, one answer (a cancelled sign-in opened
    /// again by Back never goes on to give a code).
    /// `request`: the browser's, when known (an own page's refusal looks at its session).
    func refuse(_ c: Context, _ code: String, _ description: String, _ request: Request? = nil) throws -> Response {
        try flows.end(c.flow.id)
        // One of Trifactor's own pages has no app to answer: sent back there, it would only start signing in again.
        if c.client.id == OwnPages.clientID { return try ownPageRefused(c, code, request) }
        return answer(c.flow.back, ["error": code, "error_description": description], c.frame.text)
    }
}

extension AuthorizationFlow {
    /// Where this flow answers its client.
    var back: ClientRedirect {
        ClientRedirect(uri: request.redirectURI, mode: request.responseMode, state: request.state)
    }
}
