import Core
import Foundation
import JOSE
import Store

/// What a client was given for a user (or for itself): the scope, how the
/// user signed in, and the refresh token family. Refresh tokens are stored
/// as SHA-256; each use rotates it, and a spent one used again revokes the
/// whole family (RFC 9700 §4.14.2).
struct Grant: Sendable, Equatable {
    let id: String
    let clientID: String
    /// nil for `client_credentials`.
    let userID: String?
    /// The browser session it came from; a grant without `offline_access` ends with it.
    let sessionID: String?
    let scopes: [String]
    let resource: String?
    let acr: ACR?
    let amr: [String]
    /// When the user proved who they are (ms).
    let authTime: Int64?
    var refreshExpiresAt: Int64?
    let createdAt: Int64
    var revokedAt: Int64?
    /// RFC 9449: the thumbprint of the DPoP key its tokens are bound to; the refresh token works only with a
    /// proof of that key.
    var dpopJKT: String? = nil
    /// RFC 9396: the approved authorization details, canonical JSON; its tokens carry them.
    var authorizationDetails: String? = nil
    /// The approval (`AuthorizationID`) the resource server spends them with, once.
    var authorizationID: String? = nil

    /// The approved details as JSON values, for tokens and answers.
    var details: [JSONValue]? {
        guard let text = authorizationDetails,
            case .array(let items)? = try? JSONValue.parseObject(Array(text.utf8))["authorization_details"]
        else { return nil }
        return items
    }

    var isOffline: Bool { scopes.contains("offline_access") }
}

/// The `oidc_grants` and `oidc_spent_refresh_tokens` tables.
enum GrantRepository {
    private static let columns =
        "id, client_id, user_id, session_id, scope, resource, acr, amr, auth_time, refresh_expires_at, created_at, revoked_at, dpop_jkt, authorization_details, authorization_id"

    static func insert(_ g: Grant, refreshHash: String?, on db: any SQLConnection) throws {
        try db.execute(
            """
            INSERT INTO oidc_grants (\(columns), refresh_hash)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
            """,
            [
                .text(g.id), .text(g.clientID), SQLValue(g.userID), SQLValue(g.sessionID),
                .text(g.scopes.joined(separator: " ")), SQLValue(g.resource), SQLValue(g.acr?.rawValue),
                .text(g.amr.joined(separator: " ")), SQLValue(g.authTime), SQLValue(g.refreshExpiresAt),
                .int(g.createdAt), SQLValue(g.revokedAt), SQLValue(g.dpopJKT), SQLValue(g.authorizationDetails),
                SQLValue(g.authorizationID), SQLValue(refreshHash),
            ])
    }

    static func find(_ id: String, on db: any SQLConnection) throws -> Grant? {
        try db.queryOne("SELECT \(columns) FROM oidc_grants WHERE id = $1", [.text(id)]).map(record)
    }

    /// The grant whose current refresh token hashes to `hash`.
    static func find(refreshHash hash: String, on db: any SQLConnection) throws -> Grant? {
        try db.queryOne("SELECT \(columns) FROM oidc_grants WHERE refresh_hash = $1", [.text(hash)]).map(record)
    }

    /// Keeps `refreshHash` as the grant's refresh token, living to `expiresAt` (a refresh without rotation); false
    /// when it is no longer the grant's or the grant was revoked meanwhile.
    static func renew(_ id: String, refreshHash: String, expiresAt: Int64, on db: any SQLConnection) throws -> Bool {
        try db.execute(
            """
            UPDATE oidc_grants SET refresh_expires_at = $3
            WHERE id = $1 AND refresh_hash = $2 AND revoked_at IS NULL
            """, [.text(id), .text(refreshHash), .int(expiresAt)]) == 1
    }

    /// Binds a grant's refresh token to a DPoP key, once (RFC 9449 §5).
    static func bind(_ id: String, dpopJKT: String, on db: any SQLConnection) throws {
        try db.execute(
            "UPDATE oidc_grants SET dpop_jkt = $2 WHERE id = $1 AND dpop_jkt IS NULL", [.text(id), .text(dpopJKT)])
    }

    /// The grant a spent refresh token belonged to (a reuse).
    static func grantID(spentRefreshHash hash: String, on db: any SQLConnection) throws -> String? {
        try db.queryOne("SELECT grant_id FROM oidc_spent_refresh_tokens WHERE token_hash = $1", [.text(hash)])?.text(
            "grant_id")
    }

    /// Replaces the refresh token `old` with `new` (one conditional UPDATE: two
    /// instances can never both rotate it); false when `old` is no longer current.
    static func rotate(
        _ id: String, from old: String, to new: String, expiresAt: Int64, now: Int64, on db: any SQLConnection
    ) throws -> Bool {
        guard
            try db.execute(
                """
                UPDATE oidc_grants SET refresh_hash = $3, previous_refresh_hash = $2, refresh_expires_at = $4
                WHERE id = $1 AND refresh_hash = $2 AND revoked_at IS NULL
                """, [.text(id), .text(old), .text(new), .int(expiresAt)]) == 1
        else { return false }
        try db.execute(
            "INSERT INTO oidc_spent_refresh_tokens (token_hash, grant_id, spent_at) VALUES ($1, $2, $3)",
            [.text(old), .text(id), .int(now)])
        return true
    }

    /// Revokes a grant: its refresh token stops working and its access tokens are refused by introspection and
    /// UserInfo. Returns whether it was live.
    @discardableResult
    static func revoke(_ id: String, at now: Int64, on db: any SQLConnection) throws -> Bool {
        try db.execute(
            "UPDATE oidc_grants SET revoked_at = $2, refresh_hash = NULL WHERE id = $1 AND revoked_at IS NULL",
            [.text(id), .int(now)]) == 1
    }

    /// Revokes the grants that came from a session and were not for offline use (the session ended).
    @discardableResult
    static func revoke(session id: String, at now: Int64, on db: any SQLConnection) throws -> Int {
        try db.execute(
            """
            UPDATE oidc_grants SET revoked_at = $2, refresh_hash = NULL
            WHERE session_id = $1 AND revoked_at IS NULL AND ' ' || scope || ' ' NOT LIKE '% offline_access %'
            """, [.text(id), .int(now)])
    }

    /// Revokes every grant of a user, those for offline use included (their password was reset, an administrator
    /// disabled them or ended all their sessions); returns how many were live.
    @discardableResult
    static func revokeAll(of userID: String, at now: Int64, on db: any SQLConnection) throws -> Int {
        try db.execute(
            "UPDATE oidc_grants SET revoked_at = $2, refresh_hash = NULL WHERE user_id = $1 AND revoked_at IS NULL",
            [.text(userID), .int(now)])
    }

    /// Records an access token revoked before it expires.
    static func revokeAccessToken(jti: String, expiresAt: Int64, on db: any SQLConnection) throws {
        try db.execute(
            "INSERT INTO oidc_revoked_tokens (jti, expires_at) VALUES ($1, $2) ON CONFLICT (jti) DO NOTHING",
            [.text(jti), .int(expiresAt)])
    }

    static func isRevoked(jti: String, on db: any SQLConnection) throws -> Bool {
        try db.queryOne("SELECT 1 AS x FROM oidc_revoked_tokens WHERE jti = $1", [.text(jti)]) != nil
    }

    private static func record(_ r: Row) throws -> Grant {
        let acr = try r.optionalText("acr")
        return Grant(
            id: try r.text("id"), clientID: try r.text("client_id"), userID: try r.optionalText("user_id"),
            sessionID: try r.optionalText("session_id"),
            scopes: try r.text("scope").split(separator: " ").map(String.init),
            resource: try r.optionalText("resource"),
            acr: try acr.map { text in
                guard let value = ACR(rawValue: text) else {
                    throw StoreError(.decoding, detail: "oidc_grants.acr holds an unknown level")
                }
                return value
            }, amr: try r.text("amr").split(separator: " ").map(String.init), authTime: try r.optionalInt("auth_time"),
            refreshExpiresAt: try r.optionalInt("refresh_expires_at"), createdAt: try r.int("created_at"),
            revokedAt: try r.optionalInt("revoked_at"), dpopJKT: try r.optionalText("dpop_jkt"),
            authorizationDetails: try r.optionalText("authorization_details"),
            authorizationID: try r.optionalText("authorization_id"))
    }
}
