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
                    """
                    SELECT COUNT(*) AS n FROM oidc_pushed_requests
                    WHERE client_id = $1 AND origin = $2 AND expires_at > $3 AND used_at IS NULL
                    """,
                    [.text(clientID), .text(origin), .int(now)])
            } else {
                try db.queryOne(
                    """
                    SELECT COUNT(*) AS n FROM oidc_pushed_requests
                    WHERE client_id = $1 AND expires_at > $2 AND used_at IS NULL
                    """,
                    [.text(clientID), .int(now)])
            }
        return Int(try row?.int("n") ?? 0)
    }

    /// What a `request_uri` leads to.
    enum Taken {
        /// The pushed parameters, taken now (once).
        case parameters([String: String])
        /// Used already or expired (kept half an hour past its expiry): `payment` when it pushed a payment, so the page
        /// of a used link speaks of the payment.
        case spent(payment: Bool)
        /// Unknown, another client's, or swept.
        case unknown
    }

    /// Takes the request pushed under `id` by `clientID`: one use, marked as it is read by one conditional UPDATE, so
    /// two loads of one `request_uri`, from two instances even, start one flow. The row stays (without another use)
    /// until the sweeper removes it, so a second load can say what the link was for.
    static func take(id: String, clientID: String, now: Int64, on db: any SQLConnection) throws -> Taken {
        if let row = try db.queryOne(
            """
            UPDATE oidc_pushed_requests SET used_at = $3
            WHERE id = $1 AND client_id = $2 AND used_at IS NULL AND expires_at > $3 RETURNING parameters
            """, [.text(id), .text(clientID), .int(now)])
        {
            return .parameters(try parameters(row))
        }
        guard
            let row = try db.queryOne(
                "SELECT parameters FROM oidc_pushed_requests WHERE id = $1 AND client_id = $2",
                [.text(id), .text(clientID)])
        else { return .unknown }
        let details = try parameters(row)["authorization_details"] ?? ""
        return .spent(payment: details.contains(AuthorizationDetails.paymentType))
    }

    private static func parameters(_ row: Row) throws -> [String: String] {
        try JSONDecoder().decode([String: String].self, from: Data(try row.text("parameters").utf8))
    }
}
