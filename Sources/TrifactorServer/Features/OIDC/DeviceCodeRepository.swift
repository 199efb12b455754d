import Foundation
import Store

extension DeviceAuthorization.Status: StoredValue {}

/// The `oidc_device_codes` table (RFC 8628): device and user codes as SHA-256 only; every change of state is one
/// conditional UPDATE, so two instances can never approve, deny or redeem one code twice, nor let a device poll
/// faster than its interval.
enum DeviceCodeRepository {
    private static let columns = """
        device_code_hash, client_id, scope, status, user_id, session_id, acr, amr, auth_time, poll_interval,
        last_polled_at, expires_at, created_at
        """

    static func insert(
        _ d: DeviceAuthorization, userCodeHash: String, origin: String, on db: any SQLConnection
    ) throws {
        // A code of the same letters that expired may still wait for housekeeping: it gives way.
        try db.execute(
            "DELETE FROM oidc_device_codes WHERE user_code_hash = $1 AND expires_at <= $2",
            [.text(userCodeHash), .int(d.createdAt)])
        try db.execute(
            """
            INSERT INTO oidc_device_codes (device_code_hash, user_code_hash, client_id, origin, scope, status,
              poll_interval, expires_at, created_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
            """,
            [
                .text(d.id), .text(userCodeHash), .text(d.clientID), .text(origin),
                .text(d.scopes.joined(separator: " ")), d.status.sql, .int(Int64(d.interval)), .int(d.expiresAt),
                .int(d.createdAt),
            ])
    }

    /// Whether a live code already has these letters (a new one is drawn then).
    static func userCodeTaken(_ hash: String, now: Int64, on db: any SQLConnection) throws -> Bool {
        try db.queryOne(
            "SELECT 1 AS one FROM oidc_device_codes WHERE user_code_hash = $1 AND expires_at > $2",
            [.text(hash), .int(now)]) != nil
    }

    /// How many codes wait for a user, for `clientID` (from `origin`, when given).
    static func pending(clientID: String, origin: String?, now: Int64, on db: any SQLConnection) throws -> Int {
        var sql =
            "SELECT COUNT(*) AS n FROM oidc_device_codes WHERE client_id = $1 AND status = 'pending' AND expires_at > $2"
        var values: [SQLValue] = [.text(clientID), .int(now)]
        if let origin {
            sql += " AND origin = $3"
            values.append(.text(origin))
        }
        return Int(try db.queryOne(sql, values)?.int("n") ?? 0)
    }

    static func find(_ id: String, on db: any SQLConnection) throws -> DeviceAuthorization? {
        try db.queryOne("SELECT \(columns) FROM oidc_device_codes WHERE device_code_hash = $1", [.text(id)]).map(
            record)
    }

    static func find(userCodeHash: String, on db: any SQLConnection) throws -> DeviceAuthorization? {
        try db.queryOne("SELECT \(columns) FROM oidc_device_codes WHERE user_code_hash = $1", [.text(userCodeHash)])
            .map(record)
    }

    /// Records a poll at `now` when the interval has passed since the last one; false (a poll too soon) raises the
    /// interval by 5 s instead, for this and every later poll (RFC 8628 §3.5 `slow_down`).
    static func poll(_ id: String, now: Int64, on db: any SQLConnection) throws -> Bool {
        let inTime = try db.execute(
            """
            UPDATE oidc_device_codes SET last_polled_at = $2
            WHERE device_code_hash = $1 AND (last_polled_at IS NULL OR last_polled_at + poll_interval * 1000 <= $2)
            """, [.text(id), .int(now)])
        if inTime == 1 { return true }
        try db.execute(
            "UPDATE oidc_device_codes SET poll_interval = poll_interval + 5, last_polled_at = $2 WHERE device_code_hash = $1",
            [.text(id), .int(now)])
        return false
    }

    /// The user's decision on a pending, live code, with how they signed in when they approved; false when the
    /// code no longer waits (decided meanwhile, expired).
    static func decide(_ d: DeviceAuthorization, now: Int64, on db: any SQLConnection) throws -> Bool {
        try db.execute(
            """
            UPDATE oidc_device_codes SET status = $2, user_id = $3, session_id = $4, acr = $5, amr = $6, auth_time = $7
            WHERE device_code_hash = $1 AND status = 'pending' AND expires_at > $8
            """,
            [
                .text(d.id), d.status.sql, SQLValue(d.userID), SQLValue(d.sessionID), SQLValue(d.acr?.rawValue),
                .text(d.amr.joined(separator: " ")), SQLValue(d.authTime), .int(now),
            ]) == 1
    }

    /// Spends an approved code once: true for the one caller that moved it from approved to used.
    static func redeem(_ id: String, grantID: String, on db: any SQLConnection) throws -> Bool {
        try db.execute(
            "UPDATE oidc_device_codes SET status = 'used', grant_id = $2 WHERE device_code_hash = $1 AND status = 'approved'",
            [.text(id), .text(grantID)]) == 1
    }

    private static func record(_ r: Row) throws -> DeviceAuthorization {
        DeviceAuthorization(
            id: try r.text("device_code_hash"), clientID: try r.text("client_id"),
            scopes: try r.text("scope").split(separator: " ").map(String.init), status: try r.value("status"),
            userID: try r.optionalText("user_id"), sessionID: try r.optionalText("session_id"),
            acr: try r.optionalText("acr").flatMap(ACR.init(rawValue:)),
            amr: (try r.optionalText("amr") ?? "").split(separator: " ").map(String.init),
            authTime: try r.optionalInt("auth_time"), interval: Int(try r.int("poll_interval")),
            lastPolledAt: try r.optionalInt("last_polled_at"), expiresAt: try r.int("expires_at"),
            createdAt: try r.int("created_at"))
    }
}
