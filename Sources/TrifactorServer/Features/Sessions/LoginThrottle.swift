import Core
import Crypto
import Store

/// Consecutive failed sign-ins per email address, kept for unknown addresses
/// too (keyed by the address's SHA-256), so that lockouts behave the same
/// whether or not an account exists and cannot reveal one.
///
/// An attempt is counted before the password is checked (one atomic upsert
/// that also refuses while locked); a success then clears the count. So many
/// parallel guesses cannot slip past the lock.
struct LoginThrottle {
    let policy: LockoutPolicy

    enum Admission: Equatable {
        /// Counted: this is consecutive attempt number `attempt`.
        case admitted(attempt: Int)
        case locked(retryAfter: Int)
        /// Locked for good (the policy's `ceiling`): until an administrator clears it.
        case frozen
    }

    /// Counts one attempt for `email`, or refuses it while the address is locked.
    func admit(email: EmailAddress, nowMillis: Int64, on db: any SQLConnection) throws -> Admission {
        try admit(key: SHA256.hex(email.value), nowMillis: nowMillis, on: db)
    }

    /// Counts the second step's attempts of `userID` (their own key).
    func admit(secondFactorOf userID: UserID, nowMillis: Int64, on db: any SQLConnection) throws -> Admission {
        try admit(key: "mfa:\(userID.raw)", nowMillis: nowMillis, on: db)
    }

    /// Clears the second step's count of `userID`.
    func reset(secondFactorOf userID: UserID, on db: any SQLConnection) throws {
        try reset(key: "mfa:\(userID.raw)", on: db)
    }

    /// Whether the second step of `userID` is locked for good (the policy's `ceiling`), until an administrator's reset.
    static func isFrozen(secondFactorOf userID: UserID, on db: any SQLConnection) throws -> Bool {
        try db.queryOne("SELECT locked_until FROM login_throttle WHERE email_key = $1", [.text("mfa:\(userID.raw)")])
            .map { try $0.int("locked_until") >= frozen } ?? false
    }

    /// A lock that never ends by itself (the policy's `ceiling`): in 2,000 years.
    static let frozen: Int64 = 64_000_000_000_000

    /// Counts one attempt under `key`.
    private func admit(key: String, nowMillis: Int64, on db: any SQLConnection) throws -> Admission {
        let counted = try db.queryOne(
            """
            INSERT INTO login_throttle (email_key, failures, locked_until, updated_at) VALUES ($1, 1, 0, $2)
            ON CONFLICT (email_key) DO UPDATE SET failures = login_throttle.failures + 1, updated_at = $2
            WHERE login_throttle.locked_until <= $2
            RETURNING failures
            """, [.text(key), .int(nowMillis)])
        guard let counted else {
            let until =
                try db.queryOne("SELECT locked_until FROM login_throttle WHERE email_key = $1", [.text(key)])?.int(
                    "locked_until") ?? nowMillis
            if until >= Self.frozen { return .frozen }
            return .locked(retryAfter: max(1, Int(((Double(until - nowMillis)) / 1000).rounded(.up))))
        }
        // Should this attempt fail, the lock it earns is already in place.
        let attempt = Int(try counted.int("failures"))
        if policy.freezes(afterFailures: attempt) {
            try db.execute(
                "UPDATE login_throttle SET locked_until = $2 WHERE email_key = $1", [.text(key), .int(Self.frozen)])
        } else if let delay = policy.lockout(afterFailures: attempt) {
            try db.execute(
                "UPDATE login_throttle SET locked_until = $2 WHERE email_key = $1",
                [.text(key), .int(nowMillis + Int64(delay * 1000))])
        }
        return .admitted(attempt: attempt)
    }

    /// Clears the count after a successful sign-in.
    func reset(email: EmailAddress, on db: any SQLConnection) throws {
        try reset(key: SHA256.hex(email.value), on: db)
    }

    /// Clears the second step's count of `userID`, a lock for good included (an administrator reset the factors).
    static func forgetSecondFactor(of userID: UserID, on db: any SQLConnection) throws {
        try db.execute("DELETE FROM login_throttle WHERE email_key = $1", [.text("mfa:\(userID.raw)")])
    }

    /// Clears the password lockout of an address whose password was just reset.
    static func forgetPassword(email: String, on db: any SQLConnection) throws {
        try db.execute("DELETE FROM login_throttle WHERE email_key = $1", [.text(SHA256.hex(email))])
    }

    /// Drops every count of an erased user: their address's (stored as a
    /// stored email, already normalised) and their second step's.
    static func forget(email: String, userID: UserID, on db: any SQLConnection) throws {
        try db.execute(
            "DELETE FROM login_throttle WHERE email_key IN ($1, $2)",
            [.text(SHA256.hex(email)), .text("mfa:\(userID.raw)")])
    }

    /// Clears the count under `key`.
    private func reset(key: String, on db: any SQLConnection) throws {
        try db.execute("DELETE FROM login_throttle WHERE email_key = $1", [.text(key)])
    }
}
