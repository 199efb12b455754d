import Store

/// The `passkey_logins` table: the challenges issued for a passwordless
/// passkey sign-in, each spent once.
enum PasskeyLoginRepository {
    /// Records a challenge issued at `now`.
    static func insert(challenge: String, now: Int64, on db: any SQLConnection) throws {
        try db.execute(
            "INSERT INTO passkey_logins (challenge, created_at) VALUES ($1, $2)", [.text(challenge), .int(now)])
    }

    /// Spends a challenge issued after `since`; false when it is unknown, spent or older.
    static func spend(challenge: String, now: Int64, issuedAfter since: Int64, on db: any SQLConnection) throws -> Bool
    {
        try db.execute(
            "UPDATE passkey_logins SET used_at = $2 WHERE challenge = $1 AND used_at IS NULL AND created_at > $3",
            [.text(challenge), .int(now), .int(since)]) == 1
    }
}
