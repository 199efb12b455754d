import Core
import Store

/// The `mfa_attempts` table: how many second-factor proofs one purpose (a
/// pending sign-in, a step-up of a session, an authorization, a password
/// reset) has had. Its budget belongs to what is being proven: a wrong
/// transfer code starts from the transfer's own budget, whatever happened
/// in another flow. Counted before the check, in one statement (parallel
/// proofs on any number of instances get the budget in all); cleared by a
/// success; forgotten by housekeeping a day later.
enum PurposeAttempts {
    /// Counts one attempt for `purpose`; returns its number.
    static func count(_ purpose: Purpose, now: Int64, on db: any SQLConnection) throws -> Int {
        let row = try db.queryOne(
            """
            INSERT INTO mfa_attempts (purpose, failures, updated_at) VALUES ($1, 1, $2)
            ON CONFLICT (purpose) DO UPDATE SET failures = mfa_attempts.failures + 1, updated_at = $2
            RETURNING failures
            """, [purpose.sql, .int(now)])
        return Int(try row?.int("failures") ?? 1)
    }

    /// Clears `purpose`'s count (it was proven).
    static func clear(_ purpose: Purpose, on db: any SQLConnection) throws {
        try db.execute("DELETE FROM mfa_attempts WHERE purpose = $1", [purpose.sql])
    }
}
