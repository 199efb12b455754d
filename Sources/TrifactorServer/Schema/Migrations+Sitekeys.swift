package import Store

extension Schema {
    /// From 20 on: each user's sitekey (a picture's name and a phrase, personal data kept like the display name and
    /// erased with the account), and the browsers recognised for an account (only the SHA-256 of their cookie).
    static let sitekeys: [Migration] = [
        Migration(
            version: 20, name: "sitekeys, and the browsers recognised for an account",
            sql: """
                CREATE TABLE user_sitekeys (
                  user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
                  picture TEXT NOT NULL,
                  phrase TEXT NOT NULL,
                  updated_at {{bigint}} NOT NULL
                );
                CREATE TABLE known_browsers (
                  id TEXT PRIMARY KEY,
                  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                  created_at {{bigint}} NOT NULL,
                  expires_at {{bigint}} NOT NULL
                );
                CREATE INDEX known_browsers_user ON known_browsers (user_id, expires_at);
                CREATE INDEX known_browsers_expiry ON known_browsers (expires_at);
                """)
    ]
}
