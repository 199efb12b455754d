import Core
import Sitekeys
import Store

/// The `user_sitekeys` table: one sitekey per user, erased with the account.
enum SitekeyRepository {
    static func find(_ userID: UserID, on db: any SQLConnection) throws -> Sitekey? {
        guard
            let row = try db.queryOne(
                "SELECT picture, phrase FROM user_sitekeys WHERE user_id = $1", [userID.sql])
        else { return nil }
        return Sitekey(unchecked: try row.text("picture"), phrase: try row.text("phrase"))
    }

    static func save(_ sitekey: Sitekey, for userID: UserID, now: Int64, on db: any SQLConnection) throws {
        try db.execute(
            """
            INSERT INTO user_sitekeys (user_id, picture, phrase, updated_at) VALUES ($1, $2, $3, $4)
            ON CONFLICT (user_id) DO UPDATE SET picture = $2, phrase = $3, updated_at = $4
            """, [userID.sql, .text(sitekey.picture), .text(sitekey.phrase), .int(now)])
    }
}
