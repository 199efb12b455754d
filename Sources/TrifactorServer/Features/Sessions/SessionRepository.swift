import Core
import Foundation
import Store

/// Where a page of sessions ends: the last session's creation time and id,
/// sent to clients as `<created_at>.<id>` (`next`, then `after`).
struct SessionCursor: Equatable {
    let createdAt: Int64
    let id: SessionID

    init(createdAt: Int64, id: SessionID) {
        self.createdAt = createdAt
        self.id = id
    }

    /// A cursor a client sent back; nil when it is not one this server wrote.
    init?(_ text: String) {
        let parts = text.split(separator: ".", maxSplits: 1)
        guard parts.count == 2, let at = Int64(parts[0]), at >= 0, parts[1].count == 36,
            parts[1].allSatisfy({ $0.isHexDigit || $0 == "-" })
        else { return nil }
        self.init(createdAt: at, id: SessionID(String(parts[1])))
    }

    var text: String { "\(createdAt).\(id.raw)" }
}

/// The `sessions` table: the sessions feature's own.
enum SessionRepository {
    static func insert(_ s: SessionRecord, tokenHash: String, on db: any SQLConnection) throws {
        try db.execute(
            """
            INSERT INTO sessions (id, token_hash, user_id, aal, methods, created_at, last_seen_at, password_verified_at, mfa_verified_at, ip, user_agent, device_id)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
            """,
            [
                s.id.sql, .text(tokenHash), s.userID.sql, .int(Int64(s.aal.rawValue)), StoredList.encode(s.methods),
                .int(s.createdAt), .int(s.lastSeenAt), SQLValue(s.passwordVerifiedAt), SQLValue(s.mfaVerifiedAt),
                SQLValue(s.ip),
                SQLValue(s.userAgent.map { String($0.prefix(512)) }), SQLValue(s.deviceID?.raw),
            ])
    }

    private static let columns =
        "id, user_id, aal, methods, created_at, last_seen_at, ended_at, end_reason, password_verified_at, mfa_verified_at, ip, user_agent, device_id"

    static func find(tokenHash: String, on db: any SQLConnection) throws -> SessionRecord? {
        try db.queryOne("SELECT \(columns) FROM sessions WHERE token_hash = $1", [.text(tokenHash)]).map(record)
    }

    static func find(id: SessionID, on db: any SQLConnection) throws -> SessionRecord? {
        try db.queryOne("SELECT \(columns) FROM sessions WHERE id = $1", [id.sql]).map(record)
    }

    /// The user's live sessions, newest first.
    static func live(_ userID: UserID, on db: any SQLConnection) throws -> [SessionRecord] {
        try db.query(
            "SELECT \(columns) FROM sessions WHERE user_id = $1 AND ended_at IS NULL ORDER BY created_at DESC, id",
            [userID.sql]
        ).map(record)
    }

    /// A page of the user's sessions that have not ended, newest first (`created_at` descending, then `id`),
    /// after `cursor` (the last one of the previous page).
    static func live(_ userID: UserID, after cursor: SessionCursor?, limit: Int, on db: any SQLConnection) throws
        -> [SessionRecord]
    {
        let after = cursor.map { _ in " AND (created_at < $2 OR (created_at = $2 AND id > $3))" } ?? ""
        let values: [SQLValue] = [userID.sql] + (cursor.map { [.int($0.createdAt), $0.id.sql] } ?? [])
        return try db.query(
            """
            SELECT \(columns) FROM sessions WHERE user_id = $1 AND ended_at IS NULL\(after) ORDER BY created_at DESC, id LIMIT \(limit)
            """, values
        ).map(record)
    }

    /// Ends the user's sessions but `newest` beyond the `kept - 1` newest
    /// others, so `newest` and `kept - 1` more stay; returns their ids.
    /// `newest` is left out by id, not by its place in the order: sessions
    /// created in the same millisecond would otherwise sort it past the cut.
    static func endBeyond(
        _ kept: Int, keeping newest: SessionID, of userID: UserID, at: Int64, on db: any SQLConnection
    ) throws -> [SessionID] {
        // LIMIT before OFFSET: SQLite accepts no OFFSET alone; a user holds far fewer than a million sessions.
        try db.query(
            """
            UPDATE sessions SET ended_at = $2, end_reason = $3
            WHERE id IN (SELECT id FROM sessions WHERE user_id = $1 AND id <> $4 AND ended_at IS NULL
                         ORDER BY created_at DESC, id LIMIT 1000000 OFFSET \(max(0, kept - 1)))
              AND ended_at IS NULL
            RETURNING id
            """, [userID.sql, .int(at), SessionEndReason.limit.sql, newest.sql]
        ).map { try $0.id("id") }
    }

    /// Records a second-factor proof: AAL2, the method added, the time of the proof.
    /// - Returns: false when the session ended meanwhile.
    static func stepUp(_ id: SessionID, methods added: [AuthMethod], at: Int64, on db: any SQLConnection) throws -> Bool
    {
        // Lock the row first so concurrent step-ups add their methods one after the other.
        guard
            try db.execute(
                "UPDATE sessions SET last_seen_at = last_seen_at WHERE id = $1 AND ended_at IS NULL", [id.sql]) == 1,
            let row = try db.queryOne("SELECT methods FROM sessions WHERE id = $1", [id.sql])
        else { return false }
        var methods: [AuthMethod] = try row.list("methods")
        for method in added where !methods.contains(method) { methods.append(method) }
        return try db.execute(
            "UPDATE sessions SET aal = 2, methods = $2, mfa_verified_at = $3, last_seen_at = $3 WHERE id = $1 AND ended_at IS NULL",
            [id.sql, StoredList.encode(methods), .int(at)]) == 1
    }

    /// Records uses: each session's last-seen time moves forward, never back.
    static func touch(_ uses: [SessionID: Int64], on db: any SQLConnection) throws {
        for (id, at) in uses.sorted(by: { $0.key.raw < $1.key.raw }) {
            try db.execute(
                "UPDATE sessions SET last_seen_at = $2 WHERE id = $1 AND last_seen_at < $2", [id.sql, .int(at)])
        }
    }

    /// Ends a live session; false when it had already ended (so the caller
    /// records the end once).
    static func end(_ id: SessionID, at: Int64, reason: SessionEndReason, on db: any SQLConnection) throws -> Bool {
        try db.execute(
            "UPDATE sessions SET ended_at = $2, end_reason = $3 WHERE id = $1 AND ended_at IS NULL",
            [id.sql, .int(at), reason.sql]) == 1
    }

    /// Ends every live session of the user but `keep`; returns their ids.
    static func endOthers(
        _ userID: UserID, keep: SessionID, at: Int64, reason: SessionEndReason, on db: any SQLConnection
    ) throws -> [SessionID] {
        try db.query(
            "UPDATE sessions SET ended_at = $3, end_reason = $4 WHERE user_id = $1 AND id <> $2 AND ended_at IS NULL RETURNING id",
            [userID.sql, keep.sql, .int(at), reason.sql]
        ).map { try $0.id("id") }
    }

    /// Ends every live session of the user; returns their ids (for the end hooks: `AccountLockdown`).
    @discardableResult
    static func endAll(_ userID: UserID, at: Int64, reason: SessionEndReason, on db: any SQLConnection) throws
        -> [SessionID]
    {
        try db.query(
            "UPDATE sessions SET ended_at = $2, end_reason = $3 WHERE user_id = $1 AND ended_at IS NULL RETURNING id",
            [userID.sql, .int(at), reason.sql]
        ).map { try $0.id("id") }
    }

    /// Ends the user's password-only sessions but `keep`; returns how many.
    static func endPasswordOnly(_ userID: UserID, keep: SessionID, at: Int64, on db: any SQLConnection) throws -> Int {
        try db.execute(
            "UPDATE sessions SET ended_at = $3, end_reason = $4 WHERE user_id = $1 AND id <> $2 AND aal < 2 AND ended_at IS NULL",
            [userID.sql, keep.sql, .int(at), SessionEndReason.secondFactorEnrolled.sql])
    }

    private static func record(_ row: Row) throws -> SessionRecord {
        let level = Int(try row.int("aal"))
        guard let aal = AssuranceLevel(rawValue: level) else {
            throw StoreError(.decoding, detail: "aal \(level) is not a level")
        }
        return SessionRecord(
            id: try row.id("id"), userID: try row.id("user_id"), aal: aal, methods: try row.list("methods"),
            createdAt: try row.int("created_at"), lastSeenAt: try row.int("last_seen_at"),
            endedAt: try row.optionalInt("ended_at"),
            endReason: try row.optionalText("end_reason").map { _ in try row.value("end_reason") },
            passwordVerifiedAt: try row.optionalInt("password_verified_at"),
            mfaVerifiedAt: try row.optionalInt("mfa_verified_at"),
            ip: try row.optionalText("ip"), userAgent: try row.optionalText("user_agent"),
            deviceID: try row.optionalID("device_id"))
    }
}
