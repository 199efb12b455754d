import Foundation
import HTTP
import WebUI

/// Visitors: a browser that only looks at the sign-in or account-opening
/// page costs the bank nothing in memory. Its forms carry a signed
/// `VisitorCSRF` token; a session starts only when the email is posted, an
/// account opening or a passkey sign-in starts, and it keeps the page's
/// token, so the page's other forms (and the passkey script) go on working.
extension BankApp {
    /// Whom a page before signing in is for: the browser's session when it has one, else a visitor (and the
    /// `Set-Cookie` of its nonce when it had none).
    func viewer(_ request: Request) -> (viewer: any Viewer, cookies: [String]) {
        if let session = session(request).session { return (session, []) }
        let issued = visitors.issue(cookieHeader: request.header("cookie"), secure: configuration.secure)
        return (Visitor(csrf: issued.token), issued.setCookie.map { [$0] } ?? [])
    }

    /// A POST from a page shown before signing in, whose token matches the browser's session or, without one, its
    /// visitor nonce; otherwise a 403 `Refusal` (nothing is done). `json`: the passkey script's `X-CSRF-Token`.
    func postedBeforeSession(_ request: Request, json: Bool = false) throws(Refusal) -> (viewer: any Viewer, form: Form)
    {
        let form = Form(json ? [] : request.body)
        let submitted = json ? request.header("x-csrf-token") : form[CSRF.field]
        if let session = session(request).session {
            guard CSRF.isValid(submitted: submitted, expected: session.csrf) else { throw refusal(json: json) }
            session.dropDraft()
            return (session, form)
        }
        guard let submitted, visitors.isValid(submitted: submitted, cookieHeader: request.header("cookie")) else {
            throw refusal(json: json)
        }
        return (Visitor(csrf: submitted), form)
    }

    private func refusal(json: Bool) -> Refusal {
        Refusal(
            response: json
                ? jsonError(403, "This page is stale. Reload it.")
                : refused(403, "This form was not sent from this page. Nothing was done."))
    }

    /// The session of a browser that starts signing in or opening an account: its own, or a new one that keeps the
    /// visitor's token (with the `Set-Cookie` of its cookie).
    func startSession(_ viewer: any Viewer) -> (session: BankSession, cookies: [String]) {
        if let session = viewer as? BankSession { return (session, []) }
        let (cookie, session) = sessions.issue(
            replacing: nil, carrying: BankSession(now: now(), csrf: viewer.csrf), secure: configuration.secure,
            now: now())
        // A refused form's draft of the visitor's is done with.
        return (session, [cookie.setCookie, DraftCookie.cleared(secure: configuration.secure)])
    }

    /// Nil when this client address may post the sign-in form now, else the page that asks it to wait (429).
    func signInLimited(_ request: Request) -> Response? {
        // IPv6 clients by their /64, as trifactord counts them: one subscriber holds a whole /64.
        guard let wait = signIns.take(ClientKey.of(address: request.remoteAddress), now: now()) else { return nil }
        let seconds = max(1, Int(wait.rounded(.up)))
        var response = page(
            Page.layout(
                "Please wait a moment", Screen(devPhone: configuration.devPhone),
                [
                    Page.paragraph(
                        "There were too many sign-in attempts from your network. Please wait \(seconds) seconds, then try again."
                    ),
                    Page.link("Back to sign in", "/"),
                ]), status: 429)
        response.headers.append(("Retry-After", String(seconds)))
        return response
    }
}
