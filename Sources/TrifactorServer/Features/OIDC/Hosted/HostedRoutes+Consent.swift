import API
import Core
import Foundation
import HTTP
import WebUI

extension HostedRoutes {
    /// `GET /authorize/consent`: what the client will see, the first time the user meets it.
    func consentPage(_ request: Request) throws -> Response {
        guard let c = try context(request) else { return lostFlow(request) }
        guard
            let (caller, _) = try flows.session(
                token: HostedCookies.value(cookies.session, in: request), client: AuditContext(request))
        else { return Self.seeOther("/authorize/sign-in", flow: c.flow.id) }
        let t = c.frame.text
        let items = c.flow.request.scopes.map { HostedPage.describe(scope: $0, t) }
        let page = HostedPage.layout(
            t("consent.title", ["client": c.client.name]), c.frame,
            [
                HostedPage.paragraph(t("consent.signed_in_as", ["email": caller.user.email])),
                HostedPage.actions([
                    HostedPage.link(t("consent.other_account"), "/authorize/account?flow=\(c.flow.id)")
                ]),
                HostedPage.paragraph(t("consent.will_be_able", ["client": c.client.name])),
                .element("ul", [:], items.map { .element("li", [:], [.text($0)]) }),
                c.flow.request.resource.map { HostedPage.paragraph(t("consent.resource", ["resource": $0])) } ?? .empty,
                HostedPage.paragraph(t("consent.never_sees"), class: "muted"),
                HostedPage.form(
                    "/authorize/consent", c.frame,
                    [
                        HostedPage.actions([
                            HostedPage.button(t("consent.allow"), name: "decision", value: "allow"),
                            HostedPage.button(t("consent.deny"), name: "decision", value: "deny", kind: "secondary"),
                        ])
                    ]),
            ])
        return HostedPage.response(page, c.frame)
    }

    /// `POST /authorize/consent`.
    func consentSubmitted(_ request: Request) throws -> Response {
        let form = Form(request.body)
        guard let c = try context(request, form: form) else { return lostFlow(request) }
        let token = HostedCookies.value(cookies.session, in: request)
        guard let (_, session) = try flows.session(token: token, client: AuditContext(request)) else {
            return Self.seeOther("/authorize/sign-in", flow: c.flow.id, extra: "&signedout=1")
        }
        guard form["decision"] == "allow" else {
            return try refuse(c, "access_denied", "The user did not allow access.")
        }
        try flows.consent(c.flow, session: session, client: AuditContext(request))
        var next = c
        next.flow.progress.consentedHere = true
        return try advance(next, token: token, request)
    }

    /// `GET /authorize/add-factor`: the client asks for a second factor the user has not set up; the page offers
    /// an authenticator app there and then, so the sign-in goes on instead of ending.
    func addFactorPage(_ request: Request) throws -> Response {
        guard let c = try context(request) else { return lostFlow(request) }
        // Back after the app was set up: the flow goes on where it is.
        if let done = try alreadyAdded(c, request) { return done }
        let t = c.frame.text
        let page = HostedPage.layout(
            t("add.title"), c.frame,
            [
                HostedPage.paragraph(t("add.body", ["client": c.client.name])),
                HostedPage.form(
                    "/authorize/add-factor", c.frame, [HostedPage.actions([HostedPage.button(t("add.button"))])]),
                cancelForm(c),
            ])
        return HostedPage.response(page, c.frame)
    }

    /// `POST /authorize/add-factor`: starts the authenticator app's enrollment (the same as the API's), keeps its
    /// session in a cookie of its own, and shows its page at its own address (a reload shows the same key).
    func addFactor(_ request: Request) throws -> Response {
        let form = Form(request.body)
        guard let c = try context(request, form: form) else { return lostFlow(request) }
        guard let caller = try signedIn(request) else {
            return Self.seeOther("/authorize/sign-in", flow: c.flow.id, extra: "&signedout=1")
        }
        if let done = try alreadyAdded(c, request) { return done }
        do {
            // The factor is the Trifactor account's, for every app: its entry bears the server's name, not the app's.
            let (_, session) = try enrollments.begin(
                StartEnrollmentRequest(kind: .totp), by: caller, client: AuditContext(request))
            return Self.seeOther(
                "/authorize/add-factor/app", flow: c.flow.id,
                headers: [cookies.set(cookies.enrollment, session, maxAge: 900)])
        } catch let failure as SecondFactorFailure {
            return enrollmentEnded(c, failure)
        }
    }

    /// `GET /authorize/add-factor/app[?error=wrong|shape]`: the QR code, the key and the code field.
    func addFactorAppPage(_ request: Request) throws -> Response {
        guard let c = try context(request) else { return lostFlow(request) }
        guard let caller = try signedIn(request) else {
            return Self.seeOther("/authorize/sign-in", flow: c.flow.id, extra: "&signedout=1")
        }
        guard let session = HostedCookies.value(cookies.enrollment, in: request),
            let offer = try enrollments.pendingOffer(session: session, by: caller, client: AuditContext(request))
        else { return Self.seeOther("/authorize/add-factor", flow: c.flow.id) }
        let error: String? =
            switch request.query["error"] {
            case "wrong": c.frame.text("add.app.wrong")
            case "shape": c.frame.text("add.app.shape")
            default: nil
            }
        return enrollmentPage(c, offer: offer, error: error)
    }

    /// `POST /authorize/add-factor/app`: the app's code finishes the enrollment; then the sign-in asks for its next
    /// code. A wrong code comes back to the same page (Post/Redirect/Get: a reload never posts it again).
    func addFactorAppSubmitted(_ request: Request) throws -> Response {
        let form = Form(request.body)
        guard let c = try context(request, form: form) else { return lostFlow(request) }
        guard let caller = try signedIn(request) else {
            return Self.seeOther("/authorize/sign-in", flow: c.flow.id, extra: "&signedout=1")
        }
        guard let session = HostedCookies.value(cookies.enrollment, in: request) else {
            return Self.seeOther("/authorize/add-factor", flow: c.flow.id)
        }
        let code = (form["code"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard !code.isEmpty, code.count <= 32 else {
            return Self.seeOther("/authorize/add-factor/app", flow: c.flow.id, extra: "&error=shape")
        }
        do {
            _ = try enrollments.finish(
                session: session, proof: .code(TypedCode.normalize(code)), displayName: nil, by: caller,
                client: Self.audit(request, for: c.client, c.frame.text))
            return Self.seeOther(
                "/authorize/second-factor", flow: c.flow.id, extra: "&added=1",
                headers: [cookies.clear(cookies.enrollment)])
        } catch SecondFactorFailure.invalidCode {
            return Self.seeOther("/authorize/add-factor/app", flow: c.flow.id, extra: "&error=wrong")
        } catch CommonFailure.invalidFields {
            return Self.seeOther("/authorize/add-factor/app", flow: c.flow.id, extra: "&error=shape")
        } catch let failure as SecondFactorFailure {
            return enrollmentEnded(c, failure)
        }
    }

    /// When the user has a second factor now (Back after setting one up), where the flow goes instead.
    private func alreadyAdded(_ c: Context, _ request: Request) throws -> Response? {
        let token = HostedCookies.value(cookies.session, in: request)
        guard let (_, session) = try flows.session(token: token, client: AuditContext(request)), session.hasSecondFactor
        else { return nil }
        return try advance(c, token: token, request)
    }

    private func enrollmentPage(_ c: Context, offer: EnrollmentOffer, error: String?) -> Response {
        var body: [HTML] = []
        let t = c.frame.text
        if case .totp(let secret, let uri, let svg) = offer {
            // The key in groups of four, as apps show and people type it.
            let grouped = stride(from: 0, to: secret.count, by: 4).map { i -> String in
                let start = secret.index(secret.startIndex, offsetBy: i)
                return String(
                    secret[start..<(secret.index(start, offsetBy: 4, limitedBy: secret.endIndex) ?? secret.endIndex)])
            }.joined(separator: " ")
            body += [
                HostedPage.paragraph(t("add.app.scan")),
                .element(
                    "img",
                    [
                        "class": "qr", "width": "220", "height": "220", "alt": t("add.app.qr"),
                        "src": "data:image/svg+xml;base64," + Data(svg.utf8).base64EncodedString(),
                    ]),
                .element("p", ["class": "secret", "data-secret": secret, "dir": "ltr"], [.text(grouped)]),
                HostedPage.actions([HostedPage.link(t("add.app.on_this_phone"), uri)]),
            ]
        }
        body.append(
            HostedPage.form(
                "/authorize/add-factor/app", c.frame,
                [
                    HostedPage.field(
                        t("code.totp.label"), name: "code", error: error, hint: t("code.totp.hint"),
                        autocomplete: "one-time-code", inputmode: "numeric", autofocus: true, maxlength: 16),
                    HostedPage.actions([HostedPage.button(t("add.app.button"))]),
                ]))
        body.append(cancelForm(c))
        return HostedPage.response(
            HostedPage.layout(t("add.app.title"), c.frame, body), c.frame, status: error == nil ? 200 : 422
        )
    }

    private func enrollmentEnded(_ c: Context, _ failure: SecondFactorFailure) -> Response {
        let t = c.frame.text
        let reason =
            switch failure {
            case .unverifiedEmail: t("add.ended.unverified")
            case .reauthenticationRequired: t("add.ended.reauthenticate")
            case .limitExceeded: t("add.ended.limit")
            case .enrollmentNotFound: t("add.ended.too_many")
            default: t("add.ended.other")
            }
        let page = HostedPage.layout(
            t("add.title"), c.frame,
            [
                .element("p", ["class": "error", "role": "alert"], [.text(reason)]),
                HostedPage.actions([HostedPage.link(t("add.ended.again"), "/authorize/add-factor?flow=\(c.flow.id)")]),
                cancelForm(c),
            ])
        return HostedPage.response(page, c.frame, status: 409)
    }
}
