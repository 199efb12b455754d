import Core
import Store

/// A sign-in whose password was proven (or a passwordless push's), waiting for its second step.
struct PendingSignIn: Sendable {
    let tokenHash: String
    let userID: UserID
    /// When the password was checked; nil for a passwordless push.
    let passwordVerifiedAt: Int64?
}

/// The `pending_credentials` table: sign-ins waiting for their second step.
enum PendingSignInRepository {
    static let pendingLifetime: Int64 = 5 * 60_000

    /// Starts a pending sign-in; a passwordless push's records no password proof. Returns when it expires.
    @discardableResult
    static func insertPending(
        tokenHash: String, userID: UserID, passwordVerifiedAt: Int64?, now: Int64, on db: any SQLConnection
    ) throws -> Int64 {
        let expiresAt = now + pendingLifetime
        try db.execute(
            "INSERT INTO pending_credentials (token_hash, user_id, password_verified_at, expires_at) VALUES ($1, $2, $3, $4)",
            [.text(tokenHash), userID.sql, .int(passwordVerifiedAt ?? 0), .int(expiresAt)])
        return expiresAt
    }

    /// A pending sign-in that is unused and unexpired.
    static func pending(tokenHash: String, now: Int64, on db: any SQLConnection) throws -> PendingSignIn? {
        try db.queryOne(
            "SELECT user_id, password_verified_at FROM pending_credentials WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2",
            [.text(tokenHash), .int(now)]
        ).map {
            let proven = try $0.int("password_verified_at")
            return PendingSignIn(
                tokenHash: tokenHash, userID: try $0.id("user_id"), passwordVerifiedAt: proven > 0 ? proven : nil)
        }
    }

    /// Spends a pending sign-in; false when it was spent or expired meanwhile.
    static func usePending(tokenHash: String, now: Int64, on db: any SQLConnection) throws -> Bool {
        try db.execute(
            "UPDATE pending_credentials SET used_at = $2 WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2",
            [.text(tokenHash), .int(now)]) == 1
    }

    /// Ends the pending sign-in whose credential hashes to `tokenHash`, expired or not (its push was answered with a wrong number).
    static func endPending(tokenHash: String, now: Int64, on db: any SQLConnection) throws {
        try db.execute(
            "UPDATE pending_credentials SET used_at = $2 WHERE token_hash = $1 AND used_at IS NULL",
            [.text(tokenHash), .int(now)])
    }

    /// Spends every pending sign-in of the user (their password was just reset).
    static func endPending(of userID: UserID, now: Int64, on db: any SQLConnection) throws {
        try db.execute(
            "UPDATE pending_credentials SET used_at = $2 WHERE user_id = $1 AND used_at IS NULL",
            [userID.sql, .int(now)])
    }
}
