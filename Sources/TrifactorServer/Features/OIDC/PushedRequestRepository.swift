import Foundation
import Store

/// The `oidc_pushed_requests` table: authorization requests a client pushed (RFC 9126), each until its
/// `request_uri` is used once or expires. Keyed by the SHA-256 of the reference's random part, so the table alone
/// never yields a usable `request_uri`.
enum PushedRequestRepository {
    static func insert(
        id: String, clientID: String, parameters: [String: String], expiresAt: Int64, on db: any SQLConnection
    ) throws {
        let json = String(decoding: try JSONEncoder().encode(parameters), as: UTF8.self)
        try db.execute(
            "INSERT INTO oidc_pushed_requests (id, client_id, parameters, expires_at) VALUES ($1, $2, $3, $4)",
            [.text(id), .text(clientID), .text(json), .int(expiresAt)])
    }

    /// How many of `clientID`'s pushed requests are still waiting; the expired ones are deleted on the way.
    static func waiting(clientID: String, now: Int64, on db: any SQLConnection) throws -> Int {
        try db.execute(
            "DELETE FROM oidc_pushed_requests WHERE client_id = $1 AND expires_at <= $2", [.text(clientID), .int(now)])
        return Int(
            try db.queryOne(
                "SELECT COUNT(*) AS n FROM oidc_pushed_requests WHERE client_id = $1", [.text(clientID)])?.int("n") ?? 0
        )
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
