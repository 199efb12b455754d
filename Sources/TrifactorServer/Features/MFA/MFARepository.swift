import Foundation
import Store

/// The `mfa_enrollments` and `pending_credentials` tables.
enum MFARepository {
    static func insertEnrollment(_ d: EnrollmentDraft, tokenHash: String, now: Int64, on db: any SQLConnection) throws {
        try db.execute("""
            INSERT INTO mfa_enrollments (token_hash, user_id, kind, factor_id, phone, secret_sealed, algorithm, digits, verify_request_id, created_at, expires_at,
              public_key, challenge, display_name)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
            """, [.text(tokenHash), .text(d.userID), .text(d.kind), .text(d.factorID), SQLValue(d.phone), SQLValue(d.secretSealed),
                  SQLValue(d.algorithm), SQLValue(d.digits), SQLValue(d.verifyRequestID), .int(now), .int(now + 10 * 60_000),
                  SQLValue(d.publicKey), SQLValue(d.challenge), .text(d.displayName)])
    }

    /// Counts one attempt at a live enrollment of `userID` (unused,
    /// unexpired, fewer than 5 attempts) and returns it; nil when there is none.
    static func enrollmentAttempt(tokenHash: String, userID: String, now: Int64, on db: any SQLConnection) throws -> EnrollmentDraft? {
        guard let row = try db.queryOne("""
            UPDATE mfa_enrollments SET failures = failures + 1
            WHERE token_hash = $1 AND user_id = $2 AND used_at IS NULL AND expires_at > $3 AND failures < 5
            RETURNING kind, factor_id, display_name, phone, secret_sealed, algorithm, digits, verify_request_id, public_key, challenge
            """, [.text(tokenHash), .text(userID), .int(now)]) else { return nil }
        let kind = try row.text("kind")
        let phone = try row.optionalText("phone")
        return EnrollmentDraft(kind: kind, userID: userID, factorID: try row.text("factor_id"),
                               displayName: try row.text("display_name"),
                               phone: phone, secretSealed: try row.optionalText("secret_sealed"),
                               algorithm: try row.optionalText("algorithm"), digits: try row.optionalInt("digits").map(Int.init),
                               publicKey: try row.optionalText("public_key"), challenge: try row.optionalText("challenge"),
                               verifyRequestID: try row.optionalText("verify_request_id"), response: .init())
    }

    /// Spends an enrollment; false when it was spent meanwhile.
    static func useEnrollment(tokenHash: String, now: Int64, on db: any SQLConnection) throws -> Bool {
        try db.execute("UPDATE mfa_enrollments SET used_at = $2 WHERE token_hash = $1 AND used_at IS NULL", [.text(tokenHash), .int(now)]) == 1
    }

    struct Pending: Sendable {
        let tokenHash: String
        let userID: String
        let passwordVerifiedAt: Int64
    }

    /// A pending sign-in; `passwordless` ones (a push started from the email) record no password proof (0).
    static func insertPending(tokenHash: String, userID: String, now: Int64, passwordless: Bool = false, on db: any SQLConnection) throws {
        try db.execute("INSERT INTO pending_credentials (token_hash, user_id, password_verified_at, expires_at) VALUES ($1, $2, $3, $4)",
                       [.text(tokenHash), .text(userID), .int(passwordless ? 0 : now), .int(now + 5 * 60_000)])
    }

    /// A pending sign-in that is unused and unexpired.
    static func pending(tokenHash: String, now: Int64, on db: any SQLConnection) throws -> Pending? {
        try db.queryOne("SELECT user_id, password_verified_at FROM pending_credentials WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2",
                        [.text(tokenHash), .int(now)]).map {
            Pending(tokenHash: tokenHash, userID: try $0.text("user_id"), passwordVerifiedAt: try $0.int("password_verified_at"))
        }
    }

    /// Spends a pending sign-in; false when it was spent or expired meanwhile.
    static func usePending(tokenHash: String, now: Int64, on db: any SQLConnection) throws -> Bool {
        try db.execute("UPDATE pending_credentials SET used_at = $2 WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2",
                       [.text(tokenHash), .int(now)]) == 1
    }

    /// Whether the user has unused recovery codes.
    static func hasRecoveryCodes(factorID: String, on db: any SQLConnection) throws -> Bool {
        try db.queryOne("SELECT 1 AS one FROM recovery_codes WHERE factor_id = $1 AND used_at IS NULL LIMIT 1", [.text(factorID)]) != nil
    }
}
