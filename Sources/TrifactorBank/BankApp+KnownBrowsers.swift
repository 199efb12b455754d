import Foundation
import HTTP
import Logging
import Sitekeys
import TrifactorKit
import WebUI

/// The browser the bank recognises: remembered after a sign-in with a second
/// factor (and after opening an account), shown and forgotten on the
/// settings page. Signing out keeps it: it recognises the browser, not a session.
extension BankApp {
    /// Recognises the request's browser as `customerID`'s: the `Set-Cookie` that keeps it a year (none when the
    /// database refused: the sign-in goes on, the next one tries again). With the signed-in `client`, the sitekey
    /// its password page shows becomes Trifactor's, as it is now (Trifactor owns it: the hosted sign-in and any
    /// other app show the same one).
    func rememberBrowser(_ customerID: String, _ request: Request, client: TrifactorClient? = nil) -> [String] {
        var sitekey: Sitekey?
        if let client, let chosen = (try? blocking({ try await client.sitekey() })) ?? nil {
            sitekey = try? Sitekey(picture: chosen.picture, phrase: chosen.phrase)
        }
        do {
            let value = try browsers.remember(
                customerID: customerID, current: KnownBrowsers.value(in: request.header("cookie")), sitekey: sitekey,
                now: now())
            return [KnownBrowsers.setCookie(value, secure: configuration.secure)]
        } catch {
            logger.log(.error, "bank_browser_not_remembered", ["error": .string(String(reflecting: error))])
            return []
        }
    }

    /// Gives the sitekey chosen at opening to Trifactor, which keeps it for the account (its hosted sign-in shows it
    /// on a browser recognised there). When Trifactor cannot take it now, the opening goes on: the bank's own page
    /// shows the one it keeps, and the customer can choose it again.
    func giveTrifactor(_ sitekey: Sitekey, _ client: TrifactorClient) {
        do {
            _ = try blocking({ try await client.setSitekey(picture: sitekey.picture, phrase: sitekey.phrase) })
        } catch {
            logger.log(.error, "bank_sitekey_not_given", ["error": .string(String(reflecting: error))])
        }
    }

    /// The settings card of this browser: whether it shows the customer's sitekey, and the button that forgets it.
    func browserCard(_ session: BankSession, customer: String, _ request: Request) -> HTML {
        let known =
            (try? browsers.customer(of: KnownBrowsers.value(in: request.header("cookie")), now: now())) == customer
        return .element(
            "section", ["class": "card", "aria-labelledby": "h-browser"],
            [
                .element("h2", ["id": "h-browser"], ["This browser"]),
                known
                    ? .group([
                        Page.paragraph(
                            "This browser shows your picture and phrase when you sign in. Forget it on a computer that is not yours."
                        ),
                        Page.form(
                            "/settings/browser/forget", session, [Page.button("Forget this browser", kind: "secondary")]
                        ),
                    ])
                    : Page.paragraph(
                        "This browser is not remembered: it shows your picture and phrase after your next sign-in with a second step."
                    ),
            ])
    }

    /// The routes of the recognised browser: each HTTP method and path, and the handler that answers it.
    func addBrowsers(_ router: inout Router) {
        route(&router, "POST", "/settings/browser/forget", forgetBrowser)
    }

    /// `POST /settings/browser/forget`: this browser no longer shows the customer's sitekey.
    func forgetBrowser(_ request: Request) throws -> Response {
        let (session, _, _) = try posted(request)
        _ = try customer(request)
        try browsers.forget(KnownBrowsers.value(in: request.header("cookie")))
        session.flash("This browser is forgotten: it no longer shows your picture and phrase.")
        return redirect("/settings", cookies: [KnownBrowsers.cleared(secure: configuration.secure)])
    }
}
