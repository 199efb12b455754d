import Core
package import Foundation
package import Store

/// The append-only audit log of authentication events. Writes go through the
/// request's transaction, so an event is recorded exactly when its effect is.
package enum AuditLog {
    /// Appends `event` at `at` (milliseconds), and queues its webhook messages in the same transaction
    /// (`WebhookQueue`). `subject` names the user for webhooks when the entry itself must not (an erased account).
    static func append(_ event: AuditEvent, at: Int64, subject: String? = nil, on db: any SQLConnection) throws {
        try db.execute(
            "INSERT INTO audit_log (at, kind, outcome, user_id, ip, user_agent, detail) VALUES ($1, $2, $3, $4, $5, $6, $7)",
            [
                .int(at), .text(event.kind.rawValue), .text(event.outcome.rawValue), SQLValue(event.userID),
                SQLValue(event.ip), SQLValue(event.userAgent.map { String($0.prefix(512)) }), SQLValue(event.detail),
            ])
        try WebhookQueue.enqueue(event, subject: subject, at: at, on: db)
        // Inside a request's transaction the event counts once that commits.
        if let request = RequestTransaction.current {
            request.whenCommitted { ServerMetrics.count(event) }
        } else {
            ServerMetrics.count(event)
        }
    }

    /// One stored entry.
    package struct Entry: Sendable {
        package let seq: Int64
        package let at: Date
        package let kind: String
        package let outcome: String
        package let userID: String?
        package let ip: String?
        package let userAgent: String?
        package let detail: String?
    }

    /// The newest `limit` entries, oldest first (as `tail` prints them).
    package static func tail(limit: Int, on db: any SQLConnection) throws -> [Entry] {
        try db.query(
            "SELECT seq, at, kind, outcome, user_id, ip, user_agent, detail FROM audit_log ORDER BY seq DESC LIMIT $1",
            [.int(Int64(limit))]
        ).map(entry).reversed()
    }

    /// Entries by user, kind and time, oldest first, after `after` (a `seq`), at most `limit`.
    static func entries(
        user: String?, kind: String?, since: Int64?, until: Int64?, after: Int64?, limit: Int,
        on db: any SQLConnection
    ) throws -> [Entry] {
        var conditions = ["seq > $1"]
        var values: [SQLValue] = [.int(after ?? 0)]
        func add(_ clause: String, _ value: SQLValue) {
            values.append(value)
            conditions.append(clause.replacingOccurrences(of: "?", with: "$\(values.count)"))
        }
        if let user { add("user_id = ?", .text(user)) }
        if let kind { add("kind = ?", .text(kind)) }
        if let since { add("at >= ?", .int(since)) }
        if let until { add("at < ?", .int(until)) }
        values.append(.int(Int64(limit)))
        return try db.query(
            """
            SELECT seq, at, kind, outcome, user_id, ip, user_agent, detail FROM audit_log
            WHERE \(conditions.joined(separator: " AND ")) ORDER BY seq LIMIT $\(values.count)
            """, values
        ).map(entry)
    }

    /// The user's newest `limit` entries of `kinds`, newest first (the security page's recent events; on the
    /// `(user_id, seq)` index). A password accepted while a second factor is still due is not a sign-in yet: only
    /// the sign-in that issued a session is listed.
    static func recent(user: String, kinds: [AuditEventKind], limit: Int, on db: any SQLConnection) throws -> [Entry] {
        let list = kinds.indices.map { "$\($0 + 3)" }.joined(separator: ", ")
        return try db.query(
            """
            SELECT seq, at, kind, outcome, user_id, ip, user_agent, detail FROM audit_log
            WHERE user_id = $1 AND kind IN (\(list))
              AND NOT (kind = 'signin.succeeded' AND COALESCE(detail, '') = $2)
            ORDER BY seq DESC LIMIT $\(kinds.count + 3)
            """,
            [.text(user), .text(SessionService.secondFactorDue)] + kinds.map { .text($0.rawValue) }
                + [.int(Int64(limit))]
        ).map(entry)
    }

    /// Entries by user and kind, newest first, before `before` (a `seq`), at most `limit`: keyset pages that stay
    /// put while new entries arrive.
    static func page(user: String?, kind: String?, before: Int64?, limit: Int, on db: any SQLConnection) throws
        -> [Entry]
    {
        var conditions = ["seq < $1"]
        var values: [SQLValue] = [.int(before ?? Int64.max)]
        if let user {
            values.append(.text(user))
            conditions.append("user_id = $\(values.count)")
        }
        if let kind {
            values.append(.text(kind))
            conditions.append("kind = $\(values.count)")
        }
        values.append(.int(Int64(limit)))
        return try db.query(
            """
            SELECT seq, at, kind, outcome, user_id, ip, user_agent, detail FROM audit_log
            WHERE \(conditions.joined(separator: " AND ")) ORDER BY seq DESC LIMIT $\(values.count)
            """, values
        ).map(entry)
    }

    /// How many entries were written since `since` (ms).
    static func count(since: Int64, on db: any SQLConnection) throws -> Int64 {
        try db.queryOne("SELECT COUNT(*) AS n FROM audit_log WHERE at >= $1", [.int(since)])?.int("n") ?? 0
    }

    /// An entry from a row of every column.
    static func entry(_ row: Row) throws -> Entry {
        Entry(
            seq: try row.int("seq"), at: Date(millis: try row.int("at")), kind: try row.text("kind"),
            outcome: try row.text("outcome"), userID: try row.optionalText("user_id"), ip: try row.optionalText("ip"),
            userAgent: try row.optionalText("user_agent"), detail: try row.optionalText("detail"))
    }
}
