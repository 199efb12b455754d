import Foundation
import Store

/// The `oidc_pushed_requests` table: authorization requests a client pushed (RFC 9126), each until its
/// `request_uri` is used once or expires. Keyed by the SHA-256 of the reference's random part, so the table alone
/// never yields a usable `request_uri`.
enum PushedRequestRepository {
    /// `origin`: the pushing address, for a public client (whose pushes anyone may make); nil for another.
    static func insert(
        id: String, clientID: String, origin: String?, json: String, expiresAt: Int64, on db: any SQLConnection
    ) throws {
        try db.execute(
            "INSERT INTO oidc_pushed_requests (id, client_id, origin, parameters, expires_at) VALUES ($1, $2, $3, $4, $5)",
            [.text(id), .text(clientID), SQLValue(origin), .text(json), .int(expiresAt)])
    }

    /// How many of `clientID`'s pushed requests (from `origin`, for a public client) are still waiting. Expired ones
    /// are the sweeper's.
    static func waiting(clientID: String, origin: String?, now: Int64, on db: any SQLConnection) throws -> Int {
        let row =
            if let origin {
                try db.queryOne(
                    "SELECT COUNT(*) AS n FROM oidc_pushed_requests WHERE client_id = $1 AND origin = $2 AND expires_at > $3",
                    [.text(clientID), .text(origin), .int(now)])
            } else {
                try db.queryOne(
                    "SELECT COUNT(*) AS n FROM oidc_pushed_requests WHERE client_id = $1 AND expires_at > $2",
                    [.text(clientID), .int(now)])
            }
        return Int(try row?.int("n") ?? 0)
    }

    /// Takes the request pushed under `id` by `clientID` (one use: it is deleted as it is read, so two loads of one
    /// `request_uri`, from two instances even, start one flow); nil when unknown, already used, another client's or
    /// expired.
    static func take(id: String, clientID: String, now: Int64, on db: any SQLConnection) throws -> [String: String]? {
        guard
            let row = try db.queryOne(
                "DELETE FROM oidc_pushed_requests WHERE id = $1 AND client_id = $2 RETURNING parameters, expires_at",
                [.text(id), .text(clientID)]),
            try row.int("expires_at") > now
        else { return nil }
        return try JSONDecoder().decode([String: String].self, from: Data(try row.text("parameters").utf8))
    }
}
