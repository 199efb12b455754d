import Store

/// Trifactor's schema, as numbered forward-only migrations. Append new ones;
/// never edit one that has shipped. Times are milliseconds since 1970.
public enum Schema {
    /// Every migration, in order.
    public static let migrations: [Migration] = [
        Migration(version: 1, name: "accounts, sessions, audit log, outbox, rate limits", sql: """
            CREATE TABLE users (
              id TEXT PRIMARY KEY,
              email TEXT NOT NULL UNIQUE,
              display_name TEXT,
              password_hash TEXT NOT NULL,
              email_verified_at {{bigint}},
              created_at {{bigint}} NOT NULL
            );
            CREATE TABLE email_codes (
              user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
              code_hash TEXT NOT NULL,
              expires_at {{bigint}} NOT NULL,
              window_started_at {{bigint}} NOT NULL,
              failures INTEGER NOT NULL DEFAULT 0
            );
            CREATE TABLE login_throttle (
              email_key TEXT PRIMARY KEY,
              failures INTEGER NOT NULL DEFAULT 0,
              locked_until {{bigint}} NOT NULL DEFAULT 0,
              updated_at {{bigint}} NOT NULL
            );
            CREATE TABLE sessions (
              id TEXT PRIMARY KEY,
              token_hash TEXT NOT NULL UNIQUE,
              user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
              aal INTEGER NOT NULL,
              methods TEXT NOT NULL,
              created_at {{bigint}} NOT NULL,
              last_seen_at {{bigint}} NOT NULL,
              password_verified_at {{bigint}},
              ended_at {{bigint}},
              end_reason TEXT,
              ip TEXT,
              user_agent TEXT
            );
            CREATE INDEX sessions_user ON sessions (user_id);
            CREATE TABLE audit_log (
              seq {{id}},
              at {{bigint}} NOT NULL,
              kind TEXT NOT NULL,
              outcome TEXT NOT NULL,
              user_id TEXT,
              ip TEXT,
              user_agent TEXT,
              detail TEXT
            );
            CREATE INDEX audit_log_user ON audit_log (user_id, seq);
            CREATE TABLE outbox (
              seq {{id}},
              id TEXT NOT NULL UNIQUE,
              channel TEXT NOT NULL,
              recipient TEXT NOT NULL,
              body TEXT NOT NULL,
              status TEXT NOT NULL,
              attempts INTEGER NOT NULL DEFAULT 0,
              created_at {{bigint}} NOT NULL
            );
            CREATE INDEX outbox_recipient ON outbox (recipient, seq);
            CREATE TABLE rate_limits (
              key TEXT PRIMARY KEY,
              tokens {{real}} NOT NULL,
              granted INTEGER NOT NULL,
              updated_at {{bigint}} NOT NULL
            )
            """),
    ]
}
