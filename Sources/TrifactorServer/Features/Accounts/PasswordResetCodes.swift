import Core
import Crypto
import Foundation
import Messaging
import Store

/// The `password_resets` table: a reset's code, then its reset credential.
///
/// The code is 8 random digits sent by email, stored hashed, single use, 10
/// minutes to live; five wrong codes kill it, and a new code within the same
/// 10-minute window keeps the failures counted so far (NIST SP 800-63B
/// §5.2.2: asking again never buys more guesses). The right code is spent
/// and gives the reset credential: 256 random bits, stored as SHA-256, 10
/// minutes to live, spent when the new password is set. Asking for a new
/// code leaves a credential already earned alive (someone who knows the
/// address cannot kill a reset in progress by asking again).
struct PasswordResetCodes: Sendable {
    static let lifetimeMillis: Int64 = 10 * 60 * 1000
    static let credentialLifetimeMillis: Int64 = 10 * 60 * 1000
    static let maxFailures = 5
    static let codeLength = 8

    let random: RandomSource
    let outbox: Outbox

    /// Issues a new code for `user` and queues the email that carries it, in the name of `brand` (nil: the server's).
    func issue(for user: UserRecord, brand: String? = nil, now: Int64, on db: any SQLConnection) throws {
        let code = random.digits(Self.codeLength)
        try db.execute(
            """
            INSERT INTO password_resets (user_id, code_hash, expires_at, window_started_at, failures, created_at) VALUES ($1, $2, $3, $4, 0, $4)
            ON CONFLICT (user_id) DO UPDATE SET
              code_hash = excluded.code_hash,
              expires_at = excluded.expires_at,
              failures = CASE WHEN password_resets.window_started_at + $5 <= $4 THEN 0 ELSE password_resets.failures END,
              window_started_at = CASE WHEN password_resets.window_started_at + $5 <= $4 THEN $4 ELSE password_resets.window_started_at END
            """,
            [
                user.id.sql, .text(Self.hash(code, userID: user.id)), .int(now + Self.lifetimeMillis), .int(now),
                .int(Self.lifetimeMillis),
            ])
        try outbox.enqueueEmail(
            "password_reset", to: user.email, language: outbox.texts.language(locale: nil, user: user.locale),
            values: AuditContext(ip: "", userAgent: nil, brand: brand).branded([
                "code": .text(code),
                "minutes": .number(Int(Self.lifetimeMillis / 60_000)),
            ]),
            now: now, on: db)
    }

    enum Outcome: Equatable {
        /// Right: the code is spent, and this is the reset credential (shown once).
        case verified(credential: String)
        case wrong
        /// No live code: none was asked for, it expired, was used, or was tried too often.
        case unusable
    }

    /// Checks `code` (8 digits) for `user`. The attempt is counted before the
    /// comparison, in one statement that also refuses a dead or expired code,
    /// so parallel guesses (on any number of instances) get five in all.
    func check(_ code: String, for user: UserRecord, now: Int64, on db: any SQLConnection) throws -> Outcome {
        guard
            let row = try db.queryOne(
                """
                UPDATE password_resets SET failures = failures + 1
                WHERE user_id = $1 AND code_hash IS NOT NULL AND failures < $2 AND expires_at > $3
                RETURNING code_hash
                """, [user.id.sql, .int(Int64(Self.maxFailures)), .int(now)])
        else { return .unusable }
        guard ConstantTime.equals(Self.hash(code, userID: user.id), try row.text("code_hash")) else { return .wrong }
        let credential = SessionToken.generate(random)
        // Spent, and exchanged for the credential; a concurrent use of the same code finds no code left.
        guard
            try db.execute(
                """
                UPDATE password_resets SET code_hash = NULL, failures = 0, credential_hash = $2, credential_expires_at = $3
                WHERE user_id = $1 AND code_hash IS NOT NULL
                """, [user.id.sql, .text(SHA256.hex(credential)), .int(now + Self.credentialLifetimeMillis)]) == 1
        else { return .unusable }
        return .verified(credential: credential)
    }

    /// The user whose live reset credential is `credential`, and its hash; nil
    /// for a disabled account too (an administrator disabled it after the reset
    /// began), which reads the same as a dead credential.
    static func holder(of credential: String, now: Int64, on db: any SQLConnection) throws -> (
        userID: UserID, hash: String
    )? {
        guard SessionToken.isWellFormed(credential) else { return nil }
        let hash = SHA256.hex(credential)
        guard
            let row = try db.queryOne(
                """
                SELECT r.user_id FROM password_resets r JOIN users u ON u.id = r.user_id
                WHERE r.credential_hash = $1 AND r.credential_expires_at > $2 AND u.disabled_at IS NULL
                """, [.text(hash), .int(now)])
        else { return nil }
        return (try row.id("user_id"), hash)
    }

    /// Spends the reset credential; false when it was spent or expired meanwhile.
    static func spend(hash: String, now: Int64, on db: any SQLConnection) throws -> Bool {
        try db.execute(
            "DELETE FROM password_resets WHERE credential_hash = $1 AND credential_expires_at > $2",
            [.text(hash), .int(now)]) == 1
    }

    /// Ends every reset of the user: neither its code nor its credential sets a password any more.
    static func forget(userID: UserID, on db: any SQLConnection) throws {
        try db.execute("DELETE FROM password_resets WHERE user_id = $1", [userID.sql])
    }

    /// The same work as counting a wrong code, on no row (for an address with no account, or a disabled one).
    static func countDecoyAttempt(on db: any SQLConnection) throws {
        _ = try db.execute("UPDATE password_resets SET failures = failures + 1 WHERE user_id = $1", [.text("-")])
    }

    /// What is stored: SHA-256 over the user id and the code.
    static func hash(_ code: String, userID: UserID) -> String { SHA256.hex("reset:" + userID.raw + ":" + code) }
}
