import Foundation
import Store

/// The `oidc_consents` table: which scopes a user agreed to give a client.
enum ConsentRepository {
    /// Whether the user agreed to every one of `scopes` for the client.
    static func covers(userID: String, clientID: String, scopes: [String], on db: any SQLConnection) throws -> Bool {
        guard
            let row = try db.queryOne(
                "SELECT scope FROM oidc_consents WHERE user_id = $1 AND client_id = $2",
                [.text(userID), .text(clientID)])
        else { return false }
        let granted = Set(try row.text("scope").split(separator: " ").map(String.init))
        return scopes.allSatisfy(granted.contains)
    }

    /// Adds `scopes` to what the user agreed to give the client.
    static func grant(userID: String, clientID: String, scopes: [String], at now: Int64, on db: any SQLConnection)
        throws
    {
        let current = try db.queryOne(
            "SELECT scope FROM oidc_consents WHERE user_id = $1 AND client_id = $2", [.text(userID), .text(clientID)])
        var all = try current.map { try $0.text("scope").split(separator: " ").map(String.init) } ?? []
        for scope in scopes where !all.contains(scope) { all.append(scope) }
        try db.execute(
            """
            INSERT INTO oidc_consents (user_id, client_id, scope, granted_at) VALUES ($1, $2, $3, $4)
            ON CONFLICT (user_id, client_id) DO UPDATE SET scope = excluded.scope, granted_at = excluded.granted_at
            """, [.text(userID), .text(clientID), .text(all.joined(separator: " ")), .int(now)])
    }

    /// Withdraws the user's consent to the client.
    static func revoke(userID: String, clientID: String, on db: any SQLConnection) throws {
        try db.execute(
            "DELETE FROM oidc_consents WHERE user_id = $1 AND client_id = $2", [.text(userID), .text(clientID)])
    }
}
