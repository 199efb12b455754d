import Crypto
import Foundation
import Store

/// Browsers the bank recognises: each holds a long-lived cookie (256 random
/// bits, `HttpOnly`, `SameSite=Strict`, `Secure` under TLS, a year), stored
/// only as its SHA-256 and tied to one customer. It is given after a
/// sign-in that passed a second factor and after opening an account, and
/// outlives signing out: it recognises the browser, not a session. Only on
/// such a browser, and only for its own customer's email, does the sign-in
/// page show the customer's sitekey; everywhere else it shows the same
/// neutral sentence to everybody, so the page tells no one who banks here.
struct KnownBrowsers: Sendable {
    /// The cookie's name.
    static let cookie = "bank_browser"
    /// How long a browser is recognised after its last sign-in.
    static let lifetime: TimeInterval = 365 * 24 * 3600
    /// The most browsers one customer has recognised at once (the least recently signed in go first).
    static let perCustomer = 20

    let database: any Database

    /// The browser's cookie value in a `Cookie` header, if well formed.
    static func value(in header: String?) -> String? { CookieHeader.value(cookie, in: header) }

    /// `Set-Cookie` for a browser's cookie, valid `lifetime`.
    static func setCookie(_ value: String, secure: Bool) -> String {
        CookieHeader.set(cookie, value, secure: secure, maxAge: Int(lifetime))
    }

    /// `Set-Cookie` that removes it.
    static func cleared(secure: Bool) -> String { CookieHeader.cleared(cookie, secure: secure) }

    /// Recognises this browser (whose cookie is `current`, if any) for `customerID` from `now` on, and returns its
    /// cookie's value: the same one when it was this customer's already, a new one otherwise (another customer's
    /// browser is theirs no more).
    func remember(customerID: String, current: String?, now: Date) throws -> String {
        let expires = now.addingTimeInterval(Self.lifetime).millis
        return try database.transaction { db in
            if let current {
                let updated = try db.execute(
                    "UPDATE bank_browsers SET expires_at = $3 WHERE id = $1 AND customer_id = $2",
                    [.text(SHA256.hex(current)), .text(customerID), .int(expires)])
                if updated == 1 { return current }
                try db.execute("DELETE FROM bank_browsers WHERE id = $1", [.text(SHA256.hex(current))])
            }
            let fresh = CookieHeader.randomValue()
            try db.execute(
                "INSERT INTO bank_browsers (id, customer_id, created_at, expires_at) VALUES ($1, $2, $3, $4)",
                [.text(SHA256.hex(fresh)), .text(customerID), .int(now.millis), .int(expires)])
            try db.execute(
                """
                DELETE FROM bank_browsers WHERE customer_id = $1 AND (expires_at <= $2 OR id NOT IN
                  (SELECT id FROM bank_browsers WHERE customer_id = $1 ORDER BY expires_at DESC LIMIT $3))
                """, [.text(customerID), .int(now.millis), .int(Int64(Self.perCustomer))])
            return fresh
        }
    }

    /// The customer this browser is recognised for at `now`, if any.
    func customer(of cookie: String?, now: Date) throws -> String? {
        guard let cookie else { return nil }
        return try database.read { db in
            try db.queryOne(
                "SELECT customer_id FROM bank_browsers WHERE id = $1 AND expires_at > $2",
                [.text(SHA256.hex(cookie)), .int(now.millis)])?.text("customer_id")
        }
    }

    /// The sitekey to show for `email` on this browser: its customer's own when the browser is recognised for exactly
    /// that email, nil otherwise (a new browser, another email, no customer at all). It never looks the email up.
    func sitekey(cookie: String?, email: String, now: Date) throws -> Sitekey? {
        guard let cookie else { return nil }
        return try database.read { db in
            guard
                let row = try db.queryOne(
                    """
                    SELECT c.email, c.sitekey_picture, c.sitekey_phrase FROM bank_browsers b JOIN bank_customers c ON c.id = b.customer_id
                    WHERE b.id = $1 AND b.expires_at > $2
                    """, [.text(SHA256.hex(cookie)), .int(now.millis)]), try row.text("email") == email
            else { return nil }
            return Sitekey(unchecked: try row.text("sitekey_picture"), phrase: try row.text("sitekey_phrase"))
        }
    }

    /// This browser is recognised no more.
    func forget(_ cookie: String?) throws {
        guard let cookie else { return }
        try database.transaction { db in
            _ = try db.execute("DELETE FROM bank_browsers WHERE id = $1", [.text(SHA256.hex(cookie))])
        }
    }
}
