import Foundation
import Sitekeys
import Store

/// Browsers the bank recognises (`RecognisedBrowsers` over `bank_browsers`):
/// the cookie is `HttpOnly`, `SameSite=Strict`, `Secure` under TLS, a year.
/// It is given after a sign-in that passed a second factor and after opening
/// an account. Only on such a browser, and only for its own customer's email,
/// does the sign-in page show the customer's sitekey (Trifactor's, as the
/// bank last read it at a sign-in: see `BankApp.rememberBrowser`); everywhere
/// else it shows the same neutral sentence to everybody, so the page tells no
/// one who banks here.
struct KnownBrowsers: Sendable {
    /// The cookie's name.
    static let cookie = "bank_browser"
    /// The shared logic, over the bank's table.
    static let table = RecognisedBrowsers(table: "bank_browsers", owner: "customer_id")

    let database: any Database

    /// The browser's cookie value in a `Cookie` header, if well formed.
    static func value(in header: String?) -> String? { CookieHeader.value(cookie, in: header) }

    /// `Set-Cookie` for a browser's cookie, valid a year.
    static func setCookie(_ value: String, secure: Bool) -> String {
        CookieHeader.set(cookie, value, secure: secure, maxAge: Int(RecognisedBrowsers.lifetimeSeconds))
    }

    /// `Set-Cookie` that removes it.
    static func cleared(secure: Bool) -> String { CookieHeader.cleared(cookie, secure: secure) }

    /// Recognises this browser (whose cookie is `current`, if any) for `customerID` from `now` on, and returns its
    /// cookie's value; `sitekey`, when given, is what its password page shows from now on (Trifactor's, just read).
    func remember(customerID: String, current: String?, sitekey: Sitekey? = nil, now: Date) throws -> String {
        try database.transaction { db in
            if let sitekey {
                try db.execute(
                    "UPDATE bank_customers SET sitekey_picture = $2, sitekey_phrase = $3 WHERE id = $1",
                    [.text(customerID), .text(sitekey.picture), .text(sitekey.phrase)])
            }
            return try Self.table.remember(
                customerID, current: current, fresh: CookieHeader.randomValue, now: now.millis, on: db)
        }
    }

    /// The customer this browser is recognised for at `now`, if any.
    func customer(of cookie: String?, now: Date) throws -> String? {
        try database.read { try Self.table.owner(of: cookie, now: now.millis, on: $0) }
    }

    /// The sitekey to show for `email` on this browser: its customer's own when the browser is recognised for exactly
    /// that email, nil otherwise (a new browser, another email, no customer at all). It never looks the email up.
    func sitekey(cookie: String?, email: String, now: Date) throws -> Sitekey? {
        try database.read { db in
            guard let customer = try Self.table.owner(of: cookie, now: now.millis, on: db),
                let row = try db.queryOne(
                    "SELECT email, sitekey_picture, sitekey_phrase FROM bank_customers WHERE id = $1",
                    [.text(customer)]), try row.text("email") == email
            else { return nil }
            return Sitekey(unchecked: try row.text("sitekey_picture"), phrase: try row.text("sitekey_phrase"))
        }
    }

    /// This browser is recognised no more.
    func forget(_ cookie: String?) throws {
        try database.transaction { db in _ = try Self.table.forget(cookie, on: db) }
    }
}
