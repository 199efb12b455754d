import Core
import Store

/// The `authorizations` table: bound actions, by the hash of their canonical
/// form, pending until proven, approved once, used once, or void.
enum AuthorizationRepository {
    /// A pending authorization, as stored.
    struct Pending: Sendable {
        let factorID: FactorID
        let actionHash: String
        let summary: String
    }

    /// Stores a pending authorization of `userID`, proven with the factor `factorID`, until `expiresAt`.
    static func insert(
        _ id: AuthorizationID, userID: UserID, factorID: FactorID, actionHash: String, summary: String, now: Int64,
        expiresAt: Int64,
        on db: any SQLConnection
    ) throws {
        try db.execute(
            """
            INSERT INTO authorizations (id, user_id, factor_id, action_hash, summary, status, created_at, expires_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            """,
            [
                id.sql, userID.sql, factorID.sql, .text(actionHash), .text(summary), AuthorizationState.pending.sql,
                .int(now), .int(expiresAt),
            ])
    }

    /// The user's authorization `id` while it is pending and unexpired.
    static func pending(_ id: AuthorizationID, userID: UserID, now: Int64, on db: any SQLConnection) throws -> Pending?
    {
        try db.queryOne(
            """
            SELECT factor_id, action_hash, summary FROM authorizations WHERE id = $1 AND user_id = $2 AND status = 'pending' AND expires_at > $3
            """, [id.sql, userID.sql, .int(now)]
        ).map {
            Pending(
                factorID: try $0.id("factor_id"), actionHash: try $0.text("action_hash"),
                summary: try $0.text("summary"))
        }
    }

    /// The action hash of the user's authorization `id` while it is approved, unused and unexpired.
    static func approvedHash(_ id: AuthorizationID, userID: UserID, now: Int64, on db: any SQLConnection) throws
        -> String?
    {
        try db.queryOne(
            "SELECT action_hash FROM authorizations WHERE id = $1 AND user_id = $2 AND status = 'approved' AND expires_at > $3",
            [id.sql, userID.sql, .int(now)])?.text("action_hash")
    }

    /// Approves a pending, unexpired authorization, which then lives `lifetime` from now (time to spend it, however
    /// long the user took to read it); false otherwise.
    static func approve(_ id: AuthorizationID, now: Int64, lifetime: Int64, on db: any SQLConnection) throws -> Bool {
        try db.execute(
            """
            UPDATE authorizations SET status = 'approved', approved_at = $2, expires_at = $3
            WHERE id = $1 AND status = 'pending' AND expires_at > $2
            """, [id.sql, .int(now), .int(now + lifetime)]) == 1
    }

    /// Voids the authorization while it is in `state` (pending or approved); false otherwise.
    @discardableResult
    static func void(_ id: AuthorizationID, whileIn state: AuthorizationState, on db: any SQLConnection) throws -> Bool
    {
        try db.execute("UPDATE authorizations SET status = 'void' WHERE id = $1 AND status = $2", [id.sql, state.sql])
            == 1
    }

    /// Spends an approved authorization; false when it was spent or voided meanwhile.
    static func use(_ id: AuthorizationID, now: Int64, on db: any SQLConnection) throws -> Bool {
        try db.execute(
            "UPDATE authorizations SET status = 'used', used_at = $2 WHERE id = $1 AND status = 'approved'",
            [id.sql, .int(now)]) == 1
    }
}
