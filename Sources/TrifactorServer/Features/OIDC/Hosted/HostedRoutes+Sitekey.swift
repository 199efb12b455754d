import Core
import Foundation
import HTTP
import Sitekeys
import WebUI

/// The sitekey on the password page, and the browser it is shown in. A
/// browser is recognised for an account by its own cookie (`tf_known`, a
/// year, HttpOnly, stored hashed) given after a sign-in here that passed a
/// second factor; only there, and only for that account's email, does the
/// password page show the account's sitekey. Every other case (an unknown
/// email, a new browser, another account's browser) shows one neutral
/// sentence, after the same lookup by cookie: the page tells no one who has
/// an account.
extension HostedRoutes {
    /// The `Set-Cookie`s of a sign-in completed in this browser: the session, no pending sign-in, and, when the
    /// sign-in passed a second factor, this browser recognised for the account (a database that is away costs the
    /// recognition, never the sign-in).
    func signedIn(_ request: Request, token: String, session: SessionRecord) -> [(name: String, value: String)] {
        var headers = [cookies.set(cookies.session, token), cookies.clear(cookies.pending)]
        if session.aal >= .aal2,
            let value = try? sitekeys.recognise(
                session.userID, current: HostedCookies.value(cookies.recognised, in: request),
                client: AuditContext(request))
        {
            headers.append(cookies.set(cookies.recognised, value, maxAge: Int(RecognisedBrowsers.lifetimeSeconds)))
        }
        return headers
    }

    /// What the password page shows above the password: the account's picture and phrase on a browser recognised
    /// for `email`, with the button that forgets the browser; the neutral sentence otherwise.
    func sitekeyCard(_ c: Context, _ request: Request, email: String) throws -> [HTML] {
        let t = c.frame.text
        let cookie = HostedCookies.value(cookies.recognised, in: request)
        guard let sitekey = try sitekeys.shown(email: email, cookie: cookie, now: flows.clock.now()) else {
            return [
                .element(
                    "div", ["class": "sitekey", "data-sitekey": "none"], [HostedPage.paragraph(t("sitekey.neutral"))])
            ]
        }
        return [
            .element(
                "div", ["class": "sitekey", "data-sitekey": "shown"],
                [
                    .element(
                        "img",
                        [
                            "src": SitekeyPictures.path(sitekey.picture), "alt": t("sitekey.picture"),
                            "width": "96", "height": "96",
                        ]),
                    .element(
                        "div", [:],
                        [
                            HostedPage.paragraph(t("sitekey.shown")),
                            .element("p", ["class": "phrase"], [.element("strong", [:], [.text(sitekey.phrase)])]),
                        ]),
                ]),
            HostedPage.paragraph(t("sitekey.check")),
            HostedPage.form(
                "/authorize/forget-browser", c.frame,
                [HostedPage.button(t("sitekey.forget"), kind: "link")]),
        ]
    }

    /// `POST /authorize/forget-browser`: this browser shows the neutral sentence again, for every account.
    func forgetBrowser(_ request: Request) throws -> Response {
        let form = Form(request.body)
        guard let c = try context(request, form: form) else { return lostFlow(request) }
        try sitekeys.forget(HostedCookies.value(cookies.recognised, in: request), client: AuditContext(request))
        return Self.seeOther(
            "/authorize/password", flow: c.flow.id, extra: "&forgotten=1", headers: [cookies.clear(cookies.recognised)])
    }
}
