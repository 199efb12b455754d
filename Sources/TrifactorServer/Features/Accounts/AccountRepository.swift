import API
import Core
import Foundation
import Store

/// A stored user.
struct UserRecord: Sendable {
    let id: UserID
    let email: String
    let displayName: String?
    let passwordHash: String
    let emailVerifiedAt: Int64?
    let createdAt: Int64
    /// The language of their messages (`de-de`; nil: the server's default).
    var locale: String? = nil
    /// When an administrator disabled the account (nil: it may sign in).
    var disabledAt: Int64? = nil

    /// The user as the API shows it.
    var info: UserInfo {
        UserInfo(
            id: id.raw, email: email, displayName: displayName, emailVerified: emailVerifiedAt != nil,
            createdAt: Date(millis: createdAt),
            locale: locale)
    }
}

/// The `users` table: the accounts feature's own.
enum AccountRepository {
    static let columns = "id, email, display_name, password_hash, email_verified_at, created_at, locale, disabled_at"

    static func find(email: String, on db: any SQLConnection) throws -> UserRecord? {
        try db.queryOne("SELECT \(columns) FROM users WHERE email = $1", [.text(email)]).map(record)
    }

    /// The accounts whose address equals `email` but for case (at most 20; a scan: for support tools only).
    static func find(emailIgnoringCase email: String, on db: any SQLConnection) throws -> [UserRecord] {
        try db.query(
            "SELECT \(columns) FROM users WHERE lower(email) = lower($1) ORDER BY created_at LIMIT 20",
            [.text(email)]
        ).map(record)
    }

    static func find(id: UserID, on db: any SQLConnection) throws -> UserRecord? {
        try db.queryOne("SELECT \(columns) FROM users WHERE id = $1", [id.sql]).map(record)
    }

    /// Inserts a user. - Throws: `StoreError` `.uniqueViolation` when the email is taken.
    static func insert(_ user: UserRecord, on db: any SQLConnection) throws {
        try db.execute(
            "INSERT INTO users (id, email, display_name, password_hash, email_verified_at, created_at, locale) VALUES ($1, $2, $3, $4, $5, $6, $7)",
            [
                user.id.sql, .text(user.email), SQLValue(user.displayName), .text(user.passwordHash),
                SQLValue(user.emailVerifiedAt), .int(user.createdAt),
                SQLValue(user.locale),
            ])
    }

    /// Serialises changes to one user's factors, sessions and pushes until the
    /// transaction ends (a row lock on PostgreSQL; SQLite's writers are serial
    /// anyway), so limits and "last factor" checks hold under races.
    static func lock(_ id: UserID, on db: any SQLConnection) throws {
        try db.execute("UPDATE users SET id = id WHERE id = $1", [id.sql])
    }

    /// Whether an administrator disabled the account.
    static func isDisabled(_ id: UserID, on db: any SQLConnection) throws -> Bool {
        try db.queryOne("SELECT 1 AS disabled FROM users WHERE id = $1 AND disabled_at IS NOT NULL", [id.sql]) != nil
    }

    /// Disables the account at `at` (an administrator's decision); a disabled one keeps its first date.
    static func disable(_ id: UserID, at: Int64, on db: any SQLConnection) throws {
        try db.execute("UPDATE users SET disabled_at = $2 WHERE id = $1 AND disabled_at IS NULL", [id.sql, .int(at)])
    }

    /// Lets a disabled account sign in again.
    static func enable(_ id: UserID, on db: any SQLConnection) throws {
        try db.execute("UPDATE users SET disabled_at = NULL WHERE id = $1", [id.sql])
    }

    /// Deletes the account; every row whose `user_id` references it goes with it (ON DELETE CASCADE).
    static func delete(_ id: UserID, on db: any SQLConnection) throws {
        try db.execute("DELETE FROM users WHERE id = $1", [id.sql])
    }

    static func markEmailVerified(_ id: UserID, at: Int64, on db: any SQLConnection) throws {
        try db.execute(
            "UPDATE users SET email_verified_at = $2 WHERE id = $1 AND email_verified_at IS NULL", [id.sql, .int(at)])
    }

    /// Replaces the password hash only if it is still `old` (an upgrade never
    /// overwrites a change made meanwhile).
    static func replacePasswordHash(_ id: UserID, old: String, new: String, on db: any SQLConnection) throws -> Bool {
        try db.execute(
            "UPDATE users SET password_hash = $3 WHERE id = $1 AND password_hash = $2",
            [id.sql, .text(old), .text(new)]) == 1
    }

    /// Sets a new password hash, whatever the old one was (a reset).
    static func setPasswordHash(_ id: UserID, _ hash: String, on db: any SQLConnection) throws {
        try db.execute("UPDATE users SET password_hash = $2 WHERE id = $1", [id.sql, .text(hash)])
    }

    static func setLocale(_ id: UserID, _ locale: String?, on db: any SQLConnection) throws {
        try db.execute("UPDATE users SET locale = $2 WHERE id = $1", [id.sql, SQLValue(locale)])
    }

    /// Users, newest first.
    static func list(limit: Int, on db: any SQLConnection) throws -> [UserRecord] {
        try db.query("SELECT \(columns) FROM users ORDER BY created_at DESC, id LIMIT $1", [.int(Int64(limit))]).map(
            record)
    }

    /// How many accounts there are, and how many of them are disabled (the console's dashboard).
    static func counts(on db: any SQLConnection) throws -> (all: Int64, disabled: Int64) {
        let row = try db.queryOne("SELECT COUNT(*) AS n, COUNT(disabled_at) AS d FROM users", [])
        return (try row?.int("n") ?? 0, try row?.int("d") ?? 0)
    }

    static func record(_ row: Row) throws -> UserRecord {
        UserRecord(
            id: try row.id("id"), email: try row.text("email"), displayName: try row.optionalText("display_name"),
            passwordHash: try row.text("password_hash"), emailVerifiedAt: try row.optionalInt("email_verified_at"),
            createdAt: try row.int("created_at"), locale: try row.optionalText("locale"),
            disabledAt: try row.optionalInt("disabled_at"))
    }
}
