import API
import Core
import Foundation
import Store

/// A stored session (its token is never stored, only the token's SHA-256).
struct SessionRecord: Sendable {
    let id: String
    let userID: String
    let aal: Int
    let methods: [String]
    let createdAt: Int64
    let lastSeenAt: Int64
    let endedAt: Int64?
    let endReason: String?

    /// The session as the API shows it, given the lifetimes in force.
    func info(policy: SessionPolicy) -> SessionInfo {
        SessionInfo(id: id, aal: aal, methods: methods, createdAt: Date(millis: createdAt),
                    expiresAt: policy.expiry(created: Date(millis: createdAt), lastSeen: Date(millis: lastSeenAt)))
    }
}

/// The `sessions` table: the sessions feature's own.
enum SessionRepository {
    static func insert(_ s: SessionRecord, tokenHash: String, passwordVerifiedAt: Int64?, ip: String, userAgent: String?, on db: any SQLConnection) throws {
        try db.execute("""
            INSERT INTO sessions (id, token_hash, user_id, aal, methods, created_at, last_seen_at, password_verified_at, ip, user_agent)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
            """, [.text(s.id), .text(tokenHash), .text(s.userID), .int(Int64(s.aal)), .text(s.methods.joined(separator: " ")),
                  .int(s.createdAt), .int(s.lastSeenAt), SQLValue(passwordVerifiedAt), .text(ip), SQLValue(userAgent.map { String($0.prefix(512)) })])
    }

    static func find(tokenHash: String, on db: any SQLConnection) throws -> SessionRecord? {
        try db.queryOne(
            "SELECT id, user_id, aal, methods, created_at, last_seen_at, ended_at, end_reason FROM sessions WHERE token_hash = $1",
            [.text(tokenHash)]
        ).map { row in
            SessionRecord(id: try row.text("id"), userID: try row.text("user_id"), aal: Int(try row.int("aal")),
                          methods: try row.text("methods").split(separator: " ").map(String.init), createdAt: try row.int("created_at"),
                          lastSeenAt: try row.int("last_seen_at"), endedAt: try row.optionalInt("ended_at"), endReason: try row.optionalText("end_reason"))
        }
    }

    static func touch(id: String, at: Int64, on db: any SQLConnection) throws {
        try db.execute("UPDATE sessions SET last_seen_at = $2 WHERE id = $1 AND last_seen_at < $2", [.text(id), .int(at)])
    }

    /// Ends a live session; false when it had already ended (so the caller
    /// records the end once).
    static func end(id: String, at: Int64, reason: String, on db: any SQLConnection) throws -> Bool {
        try db.execute("UPDATE sessions SET ended_at = $2, end_reason = $3 WHERE id = $1 AND ended_at IS NULL",
                       [.text(id), .int(at), .text(reason)]) == 1
    }
}
