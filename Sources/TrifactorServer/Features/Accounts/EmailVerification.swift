import Core
import Crypto
import Foundation
import Messaging
import Store

/// Email verification codes: 6 random digits, stored hashed, single use,
/// 10 minutes to live. Five wrong codes kill the code, and a new code
/// within the same 10-minute window keeps the failures counted so far, so
/// resending never buys an attacker more guesses (NIST SP 800-63B §5.2.2).
struct EmailVerification: Sendable {
    static let lifetimeMillis: Int64 = 10 * 60 * 1000
    static let maxFailures = 5
    static let codeLength = 6

    let random: RandomSource
    let outbox: Outbox

    /// Issues a new code for `user` and queues the email that carries it, in the name of `brand` (nil: the server's).
    func issue(for user: UserRecord, brand: String? = nil, now: Int64, on db: any SQLConnection) throws {
        let code = random.digits(Self.codeLength)
        // A new window (and a clean failure count) only once the previous window is over.
        try db.execute(
            """
            INSERT INTO email_codes (user_id, code_hash, expires_at, window_started_at, failures) VALUES ($1, $2, $3, $4, 0)
            ON CONFLICT (user_id) DO UPDATE SET
              code_hash = excluded.code_hash,
              expires_at = excluded.expires_at,
              failures = CASE WHEN email_codes.window_started_at + $5 <= $4 THEN 0 ELSE email_codes.failures END,
              window_started_at = CASE WHEN email_codes.window_started_at + $5 <= $4 THEN $4 ELSE email_codes.window_started_at END
            """,
            [
                user.id.sql, .text(Self.hash(code, userID: user.id)), .int(now + Self.lifetimeMillis), .int(now),
                .int(Self.lifetimeMillis),
            ])
        try outbox.enqueueEmail(
            "verify", to: user.email, language: outbox.texts.language(locale: nil, user: user.locale),
            values: AuditContext(ip: "", userAgent: nil, brand: brand).branded([
                "code": .text(code),
                "minutes": .number(Int(Self.lifetimeMillis / 60_000)),
            ]),
            now: now, on: db)
    }

    enum Outcome: Equatable { case verified, wrong, unusable }

    /// Checks `code` for `user`. The attempt is counted before the comparison,
    /// in one statement that also refuses a dead or expired code, so parallel
    /// guesses (on any number of instances) get five tries in all; a match
    /// then spends the code and verifies the email.
    func check(_ code: String, for user: UserRecord, now: Int64, on db: any SQLConnection) throws -> Outcome {
        guard
            let row = try db.queryOne(
                """
                UPDATE email_codes SET failures = failures + 1
                WHERE user_id = $1 AND failures < $2 AND expires_at > $3
                RETURNING code_hash
                """, [user.id.sql, .int(Int64(Self.maxFailures)), .int(now)])
        else { return .unusable }
        guard ConstantTime.equals(Self.hash(code, userID: user.id), try row.text("code_hash")) else { return .wrong }
        // Spend it; a concurrent use of the same code finds no row.
        guard try db.execute("DELETE FROM email_codes WHERE user_id = $1", [user.id.sql]) == 1 else { return .unusable }
        try AccountRepository.markEmailVerified(user.id, at: now, on: db)
        return .verified
    }

    /// What is stored: SHA-256 over the user id and the code.
    static func hash(_ code: String, userID: UserID) -> String { SHA256.hex(userID.raw + ":" + code) }
}
