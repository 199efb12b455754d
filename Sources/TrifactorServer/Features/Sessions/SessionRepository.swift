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
    var lastSeenAt: Int64
    let endedAt: Int64?
    let endReason: String?
    var passwordVerifiedAt: Int64? = nil
    var mfaVerifiedAt: Int64? = nil
    var ip: String? = nil
    var userAgent: String? = nil
    /// The device key that proved the second factor, if one did.
    var deviceID: String? = nil

    /// Whether a password or second-factor proof was made within `window` seconds of `now`.
    func freshProof(now: Int64, window: TimeInterval) -> Bool {
        max(passwordVerifiedAt ?? 0, mfaVerifiedAt ?? 0) >= now - Int64(window * 1000)
    }

    /// Whether a second-factor proof was made within `window` seconds of `now`.
    func freshSecondFactor(now: Int64, window: TimeInterval) -> Bool {
        (mfaVerifiedAt ?? 0) >= now - Int64(window * 1000)
    }

    /// The session as the API shows it, with the lifetimes of its level.
    func info(_ env: Environment) -> SessionInfo { info(policy: env.sessionPolicy(aal: aal)) }

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
            INSERT INTO sessions (id, token_hash, user_id, aal, methods, created_at, last_seen_at, password_verified_at, mfa_verified_at, ip, user_agent, device_id)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
            """, [.text(s.id), .text(tokenHash), .text(s.userID), .int(Int64(s.aal)), .text(s.methods.joined(separator: " ")),
                  .int(s.createdAt), .int(s.lastSeenAt), SQLValue(passwordVerifiedAt), SQLValue(s.mfaVerifiedAt), .text(ip),
                  SQLValue(userAgent.map { String($0.prefix(512)) }), SQLValue(s.deviceID)])
    }

    private static let columns = "id, user_id, aal, methods, created_at, last_seen_at, ended_at, end_reason, password_verified_at, mfa_verified_at, ip, user_agent, device_id"

    static func find(tokenHash: String, on db: any SQLConnection) throws -> SessionRecord? {
        try db.queryOne("SELECT \(columns) FROM sessions WHERE token_hash = $1", [.text(tokenHash)]).map(record)
    }

    /// The user's live sessions, newest first.
    static func live(userID: String, on db: any SQLConnection) throws -> [SessionRecord] {
        try db.query("SELECT \(columns) FROM sessions WHERE user_id = $1 AND ended_at IS NULL ORDER BY created_at DESC, id", [.text(userID)]).map(record)
    }

    /// Records a second-factor proof: AAL2, the method added, the time of the proof.
    /// - Returns: false when the session ended meanwhile.
    static func stepUp(id: String, method: String, at: Int64, on db: any SQLConnection) throws -> Bool {
        // Lock the row first so concurrent step-ups add their methods one after the other.
        guard try db.execute("UPDATE sessions SET last_seen_at = last_seen_at WHERE id = $1 AND ended_at IS NULL", [.text(id)]) == 1,
              let row = try db.queryOne("SELECT methods FROM sessions WHERE id = $1", [.text(id)]) else { return false }
        var methods = try row.text("methods").split(separator: " ").map(String.init)
        if !methods.contains(method) { methods.append(method) }
        return try db.execute("UPDATE sessions SET aal = 2, methods = $2, mfa_verified_at = $3, last_seen_at = $3 WHERE id = $1 AND ended_at IS NULL",
                              [.text(id), .text(methods.joined(separator: " ")), .int(at)]) == 1
    }

    private static func record(_ row: Row) throws -> SessionRecord {
        SessionRecord(id: try row.text("id"), userID: try row.text("user_id"), aal: Int(try row.int("aal")),
                      methods: try row.text("methods").split(separator: " ").map(String.init), createdAt: try row.int("created_at"),
                      lastSeenAt: try row.int("last_seen_at"), endedAt: try row.optionalInt("ended_at"), endReason: try row.optionalText("end_reason"),
                      passwordVerifiedAt: try row.optionalInt("password_verified_at"), mfaVerifiedAt: try row.optionalInt("mfa_verified_at"),
                      ip: try row.optionalText("ip"), userAgent: try row.optionalText("user_agent"), deviceID: try row.optionalText("device_id"))
    }

    /// Records uses: each session's last-seen time moves forward, never back.
    static func touch(_ uses: [String: Int64], on db: any SQLConnection) throws {
        for (id, at) in uses.sorted(by: { $0.key < $1.key }) {
            try db.execute("UPDATE sessions SET last_seen_at = $2 WHERE id = $1 AND last_seen_at < $2", [.text(id), .int(at)])
        }
    }

    /// Ends a live session; false when it had already ended (so the caller
    /// records the end once).
    static func end(id: String, at: Int64, reason: String, on db: any SQLConnection) throws -> Bool {
        try db.execute("UPDATE sessions SET ended_at = $2, end_reason = $3 WHERE id = $1 AND ended_at IS NULL",
                       [.text(id), .int(at), .text(reason)]) == 1
    }
}
