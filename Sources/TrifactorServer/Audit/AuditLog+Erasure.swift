import Core
import Store

extension AuditLog {
    /// The verifications named in one statement at most (well below SQLite's and PostgreSQL's limits on parameters).
    static let erasureBatch = 500

    /// Names `userID` on the entries of the verifications `ids` written before
    /// entries named the user (`verify.*` entries whose detail starts `id=<verification>`),
    /// so that `pseudonymise` takes them too.
    static func attribute(verifications ids: [VerificationID], to userID: UserID, on db: any SQLConnection) throws {
        for start in stride(from: 0, to: ids.count, by: erasureBatch) {
            let batch = ids[start..<min(start + erasureBatch, ids.count)]
            let placeholders = batch.indices.map { "$\($0 - start + 2)" }.joined(separator: ", ")
            try db.execute(
                """
                UPDATE audit_log SET user_id = $1
                WHERE user_id IS NULL AND kind LIKE 'verify.%' AND detail LIKE 'id=%'
                  AND substr(detail, 4, 36) IN (\(placeholders))
                """, [userID.sql] + batch.map(\.sql))
        }
    }

    /// Keeps an erased user's trail without them: `pseudonym` in place of
    /// their id; addresses, user agents and details cleared, but for
    /// administrators' own entries, which keep their detail (who did what; no
    /// personal data in it).
    static func pseudonymise(_ userID: UserID, as pseudonym: String, on db: any SQLConnection) throws {
        try db.execute(
            """
            UPDATE audit_log SET user_id = $2, ip = NULL, user_agent = NULL,
              detail = CASE WHEN kind LIKE 'admin.%' THEN detail ELSE NULL END
            WHERE user_id = $1
            """, [userID.sql, .text(pseudonym)])
    }
}
