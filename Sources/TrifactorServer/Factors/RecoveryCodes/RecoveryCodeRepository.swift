import Core
import Store

/// The `recovery_codes` table: each code of a recovery-code factor, stored
/// hashed (`RecoveryCodesFactor.hash`), usable once.
enum RecoveryCodeRepository {
    /// Stores one code of the factor `factorID`, by its hash.
    static func insert(id: RecoveryCodeID, factorID: FactorID, userID: UserID, hash: String, on db: any SQLConnection)
        throws
    {
        try db.execute(
            "INSERT INTO recovery_codes (id, factor_id, user_id, code_hash) VALUES ($1, $2, $3, $4)",
            [id.sql, factorID.sql, userID.sql, .text(hash)])
    }

    /// Spends the unused code of the factor `factorID` that hashes to `hash`; false when there is none.
    static func use(factorID: FactorID, hash: String, at: Int64, on db: any SQLConnection) throws -> Bool {
        try db.execute(
            "UPDATE recovery_codes SET used_at = $3 WHERE factor_id = $1 AND code_hash = $2 AND used_at IS NULL",
            [factorID.sql, .text(hash), .int(at)]) == 1
    }

    /// The unused codes of a recovery-code factor.
    static func unused(_ factorID: FactorID, on db: any SQLConnection) throws -> Int64 {
        try db.queryOne(
            "SELECT COUNT(*) AS n FROM recovery_codes WHERE factor_id = $1 AND used_at IS NULL", [factorID.sql])?.int(
                "n") ?? 0
    }

    /// Whether the recovery-code factor `factorID` has unused codes.
    static func hasUnused(_ factorID: FactorID, on db: any SQLConnection) throws -> Bool {
        try db.queryOne(
            "SELECT 1 AS one FROM recovery_codes WHERE factor_id = $1 AND used_at IS NULL LIMIT 1", [factorID.sql])
            != nil
    }
}
