import Foundation
import HTTP
import Logging
import TrifactorKit
import WebUI

/// What every route shares: the browser's session, pages and redirects
/// (every form posts, then the browser is sent to a page: Post/Redirect/Get,
/// so Back and refresh never resubmit), refused forms sent back with what was
/// typed, and errors that become a page, never a 500 for a refusal.
extension BankApp {
    /// The browser's session and cookie, if it has a live one.
    func session(_ request: Request) -> (cookie: String?, session: BankSession?) {
        let cookie = SessionCookie.value(in: request.header("cookie"))
        let found = sessions.find(cookie, now: now())
        found?.touch(now())
        return (cookie, found)
    }

    /// The pages' policy. On the standard path a form may also lead to Trifactor (signing in, approving a payment,
    /// signing out go there by the form's redirect, which `form-action` governs too).
    var contentSecurityPolicy: String {
        let trifactor = standardClients?.first.map { " " + Self.origin(of: $0.issuer) } ?? ""
        return "default-src 'none'; img-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'; "
            + "form-action 'self'\(trifactor); frame-ancestors 'none'; base-uri 'none'"
    }

    /// `scheme://host[:port]` of `url`.
    static func origin(of url: URL) -> String {
        var components = URLComponents()
        components.scheme = url.scheme
        components.host = url.host
        components.port = url.port
        return components.string ?? ""
    }

    func page(_ html: HTML, status: Int = 200, cookies: [String] = []) -> Response {
        var response = Response.html(html.rendered, status: status)
        response.headers.append(("Content-Security-Policy", contentSecurityPolicy))
        response.headers.append(("Cache-Control", "no-store"))
        for cookie in cookies { response.headers.append(("Set-Cookie", cookie)) }
        return response
    }

    func redirect(_ location: String, cookies: [String] = []) -> Response {
        var response = Response(status: 303, headers: [("Location", location)])
        for cookie in cookies { response.headers.append(("Set-Cookie", cookie)) }
        return response
    }

    /// How a page for `viewer` is framed; `passkeys`: it has passkey buttons (shown only where passkeys can work).
    func screen(
        _ viewer: (any Viewer)?, _ request: Request, notice: String? = nil, tab: Screen.Tab? = nil, money: Bool = false,
        passkeys: Bool = false, refresh: Int? = nil
    ) -> Screen {
        Screen(
            viewer: viewer, devPhone: configuration.devPhone, tab: tab, notice: notice,
            idle: money ? configuration.idleTimeout : nil, refresh: refresh,
            passkeys: passkeys && Self.passkeysWork(request))
    }

    /// Whether passkeys can work for this request's page: WebAuthn needs a domain, so a browser that reached the bank
    /// at an IP address (`127.0.0.1:8090`) is not offered them ("This is an invalid domain").
    static func passkeysWork(_ request: Request) -> Bool {
        guard let host = request.header("host"), !host.isEmpty else { return true }
        if host.hasPrefix("[") { return false }
        let name = host.split(separator: ":").first.map(String.init) ?? host
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        return !(labels.count == 4 && labels.allSatisfy { UInt8($0) != nil })
    }

    /// A page for a browser without a (live) session or with a bad CSRF token: nothing was done.
    func refused(_ status: Int, _ sentence: String) -> Response {
        page(
            Page.layout(
                status == 403 ? "Please try again" : status >= 500 ? "Something went wrong" : "That did not work",
                Screen(devPhone: configuration.devPhone),
                [Page.paragraph(sentence), Page.link("Go to the start", "/", class: "button primary")]), status: status)
    }

    /// A page to answer instead of going on (a stale session, a bad CSRF token).
    struct Refusal: Error {
        let response: Response
    }

    /// Adds a route whose `Refusal`s become their page. A refusal from Trifactor that the handler did not expect is
    /// said on the page of the customer's current step (a GET of that very page gets a page saying it), never a
    /// 500; any other error is a plain 500 page (logged). For a signed-in browser it is the one place that learns that
    /// the customer's Trifactor session ended (signed out elsewhere, a password change): asked before the handler when
    /// due (`checkTrifactorSession`), or found by any Trifactor call the handler made. Then the bank session ends too
    /// and the browser goes to the sign-in page with a notice. A Trifactor that cannot be reached signs no one out.
    func route(
        _ router: inout Router, _ method: String, _ path: String,
        _ handler: @escaping @Sendable (Request) throws -> Response
    ) {
        router.add(method, path) { [self] request in
            let (cookie, found) = self.session(request)
            let signedIn = found?.isSignedIn == true ? found : nil
            if let signedIn, let signedOut = checkTrifactorSession(signedIn, cookie: cookie, request) {
                return signedOut
            }
            if let signedIn, let detour = standardDetour(signedIn, request) { return detour }
            do {
                let response = try handler(request)
                if let signedIn, trifactorSessionEnded(signedIn, cookie: cookie, error: nil) {
                    return signedOutElsewhere(cookie, request)
                }
                return response
            } catch let refusal as Refusal {
                return refusal.response
            } catch {
                if let signedIn, trifactorSessionEnded(signedIn, cookie: cookie, error: error) {
                    return signedOutElsewhere(cookie, request)
                }
                if (error as? TrifactorError)?.code == .transport { return refused(503, Self.sentence(error)) }
                if let problem = (error as? TrifactorError)?.problem, problem.status < 500 {
                    logger.log(
                        .info, "bank_unexpected_refusal",
                        ["path": .string(request.path), "code": .string(problem.code.rawValue)])
                    return said(Self.sentence(error), found, request, status: problem.status)
                }
                logger.log(
                    .error, "bank_failure",
                    ["path": .string(request.path), "error": .string(String(reflecting: error))])
                return refused(500, "Something went wrong on our side. Nothing was done; please try again.")
            }
        }
    }

    /// `sentence` on the page of the customer's current step: a redirect there with it as the notice, or, for a GET of
    /// that very page (or without a session), a page of its own.
    func said(_ sentence: String, _ session: BankSession?, _ request: Request, status: Int) -> Response {
        let step = currentStep(session)
        guard let session, request.method != "GET" || step != request.path else {
            return refused(status == 401 ? 409 : status, sentence)
        }
        session.flash(sentence)
        return redirect(step)
    }

    /// The session of a POST whose CSRF token matches; otherwise a 403 `Refusal` (nothing is done).
    func posted(_ request: Request) throws(Refusal) -> (BankSession, Form, String?) {
        let (cookie, session) = self.session(request)
        guard let session else {
            throw Refusal(response: refused(403, "Your session has ended, so nothing was done. Please sign in again."))
        }
        let form = Form(request.body)
        guard CSRF.isValid(submitted: form[CSRF.field], expected: session.csrf) else {
            throw Refusal(response: refused(403, "This form was not sent from this page. Nothing was done."))
        }
        session.dropDraft()
        return (session, form, cookie)
    }

    /// The session of a JSON POST from the passkey script whose `X-CSRF-Token` matches; otherwise a 403 `Refusal`.
    func postedJSON(_ request: Request) throws(Refusal) -> (BankSession, String?) {
        let (cookie, session) = self.session(request)
        guard let session, CSRF.isValid(submitted: request.header("x-csrf-token"), expected: session.csrf) else {
            throw Refusal(response: jsonError(403, "Your session has ended or this page is stale. Reload it."))
        }
        return (session, cookie)
    }

    func jsonError(_ status: Int, _ sentence: String) -> Response {
        Response.json(["error": sentence], status: status)
    }

    /// A refused form sent back to the page at `path` (303) with what was typed and why: kept in the session, or in a
    /// visitor's signed draft cookie.
    func back(to path: String, _ viewer: any Viewer, _ draft: FormDraft, cookies: [String] = []) -> Response {
        if let session = viewer as? BankSession {
            session.keep(draft, for: path, now: now())
            return redirect(path, cookies: cookies)
        }
        return redirect(
            path,
            cookies: cookies
                + [drafts.setCookie(draft, for: path, now: now(), secure: configuration.secure)].compactMap { $0 })
    }

    /// The draft kept for the page at `path` for this browser: its session's, or a visitor's cookie (which lives a minute).
    func draft(for path: String, _ viewer: any Viewer, _ request: Request) -> FormDraft? {
        if let session = viewer as? BankSession, let kept = session.draft(for: path, now: now()) { return kept }
        return drafts.draft(in: request.header("cookie"), for: path, now: now())
    }
}
