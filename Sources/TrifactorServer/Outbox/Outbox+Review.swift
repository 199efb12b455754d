import Core
import Store

/// The messages the conversion guard holds for an operator's review (status
/// `review`), by what they belong to (`verify:<id>:<step>`): `ReviewQueue`
/// decides, these statements carry it out.
extension Outbox {
    /// The held messages, oldest first, at most `limit`.
    static func heldForReview(limit: Int, on db: any SQLConnection) throws -> [(
        ref: String, channel: String, to: String, createdAt: Int64
    )] {
        try db.query(
            "SELECT ref, channel, recipient, created_at FROM outbox WHERE status = 'review' ORDER BY created_at, seq LIMIT $1",
            [.int(Int64(limit))]
        ).map { (try $0.text("ref"), try $0.text("channel"), try $0.text("recipient"), try $0.int("created_at")) }
    }

    /// The `ref`s of the held messages whose `ref` starts with `prefix`.
    static func heldForReview(refsStartingWith prefix: String, on db: any SQLConnection) throws -> [String] {
        try db.query("SELECT ref FROM outbox WHERE ref LIKE $1 AND status = 'review'", [.text("\(prefix)%")]).map {
            try $0.text("ref")
        }
    }

    /// Releases the held message `ref` at `now`: `pending` (due now) or `held` (until its step fires).
    static func releaseReviewed(ref: String, as status: OutboxStatus, now: Int64, on db: any SQLConnection) throws {
        try db.execute(
            "UPDATE outbox SET status = $2, next_attempt_at = $3, created_at = $3 WHERE ref = $1 AND status = 'review'",
            [.text(ref), status.sql, .int(now)])
    }

    /// Drops the held messages whose `ref` starts with `prefix`, forgetting their text; returns how many.
    @discardableResult
    static func dropReviewed(refsStartingWith prefix: String, on db: any SQLConnection) throws -> Int {
        try db.execute(
            "UPDATE outbox SET status = 'void', body = '' WHERE ref LIKE $1 AND status = 'review'",
            [.text("\(prefix)%")])
    }
}
