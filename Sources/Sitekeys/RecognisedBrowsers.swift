import Crypto
package import Store

/// Browsers recognised for an account, as both trifactord (`known_browsers`)
/// and the bank (`bank_browsers`) keep them: each holds a long-lived cookie
/// (256 random bits) stored only as its SHA-256 and tied to one owner. It is
/// given after a sign-in that passed a second factor and outlives signing
/// out: it recognises the browser, not a session. Only on such a browser, and
/// only for its own owner's email, does a password page show the sitekey.
///
/// The table has the columns `id` (the hash), the owner column, `created_at`
/// and `expires_at` (milliseconds). Every method runs on the caller's
/// connection, inside the caller's transaction.
package struct RecognisedBrowsers: Sendable {
    /// How long a browser is recognised after its last sign-in: a year.
    package static let lifetimeSeconds: Int64 = 365 * 24 * 3600
    /// The most browsers one owner has recognised at once (the least recently signed in go first).
    package static let perOwner = 20

    /// The table (a constant of the program, never input).
    let table: StaticString
    /// Its owner column (`user_id`, `customer_id`).
    let owner: StaticString

    package init(table: StaticString, owner: StaticString) {
        self.table = table
        self.owner = owner
    }

    /// What the table stores for a cookie: its SHA-256.
    package static func key(_ cookie: String) -> String { SHA256.hex(cookie) }

    /// Recognises this browser (whose cookie is `current`, if any) for `ownerID` from `now` on, and returns its
    /// cookie's value: the same one when it was this owner's already, `fresh()` otherwise (another owner's browser
    /// is theirs no more). Keeps at most `perOwner` browsers per owner.
    package func remember(
        _ ownerID: String, current: String?, fresh: () -> String, now: Int64, on db: any SQLConnection
    ) throws -> String {
        let expires = now + Self.lifetimeSeconds * 1000
        if let current {
            let updated = try db.execute(
                "UPDATE \(table) SET expires_at = $3 WHERE id = $1 AND \(owner) = $2",
                [.text(Self.key(current)), .text(ownerID), .int(expires)])
            if updated == 1 { return current }
            try db.execute("DELETE FROM \(table) WHERE id = $1", [.text(Self.key(current))])
        }
        let made = fresh()
        try db.execute(
            "INSERT INTO \(table) (id, \(owner), created_at, expires_at) VALUES ($1, $2, $3, $4)",
            [.text(Self.key(made)), .text(ownerID), .int(now), .int(expires)])
        try db.execute(
            """
            DELETE FROM \(table) WHERE \(owner) = $1 AND (expires_at <= $2 OR id NOT IN
              (SELECT id FROM \(table) WHERE \(owner) = $1 ORDER BY expires_at DESC LIMIT $3))
            """, [.text(ownerID), .int(now), .int(Int64(Self.perOwner))])
        return made
    }

    /// The owner this browser is recognised for at `now`, if any.
    package func owner(of cookie: String?, now: Int64, on db: any SQLConnection) throws -> String? {
        guard let cookie else { return nil }
        return try db.queryOne(
            "SELECT \(owner) AS owner FROM \(table) WHERE id = $1 AND expires_at > $2",
            [.text(Self.key(cookie)), .int(now)])?.text("owner")
    }

    /// This browser is recognised no more; true when it was.
    @discardableResult
    package func forget(_ cookie: String?, on db: any SQLConnection) throws -> Bool {
        guard let cookie else { return false }
        return try db.execute("DELETE FROM \(table) WHERE id = $1", [.text(Self.key(cookie))]) > 0
    }

    /// Browsers whose year has run out, gone (housekeeping).
    @discardableResult
    package func sweep(now: Int64, on db: any SQLConnection) throws -> Int {
        try db.execute("DELETE FROM \(table) WHERE expires_at <= $1", [.int(now)])
    }
}
