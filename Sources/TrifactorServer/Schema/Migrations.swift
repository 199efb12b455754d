package import Store

/// Trifactor's schema, as numbered forward-only migrations. Append new ones;
/// never edit one that has shipped. Times are milliseconds since 1970.
package enum Schema {
    /// Every migration, in version order: the accounts and factors, the OpenID Provider's (Migrations+Provider.swift)
    /// the sitekeys' (Migrations+Sitekeys.swift), the webhooks' (Migrations+Webhooks.swift) and the console's staff
    /// (Migrations+Staff.swift), whose numbers interleave.
    package static let migrations: [Migration] =
        [
            Migration(
                version: 1, name: "accounts, sessions, audit log, outbox, rate limits",
                sql: """
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
            Migration(
                version: 2, name: "outbox delivery, API keys, phone verification",
                sql: """
                    ALTER TABLE outbox ADD COLUMN ref TEXT;
                    ALTER TABLE outbox ADD COLUMN locale TEXT NOT NULL DEFAULT 'en-us';
                    ALTER TABLE outbox ADD COLUMN next_attempt_at {{bigint}} NOT NULL DEFAULT 0;
                    ALTER TABLE outbox ADD COLUMN lease_until {{bigint}} NOT NULL DEFAULT 0;
                    ALTER TABLE outbox ADD COLUMN delivered_at {{bigint}};
                    ALTER TABLE outbox ADD COLUMN last_error TEXT;
                    UPDATE outbox SET status = 'void', body = '' WHERE status = 'pending';
                    CREATE INDEX outbox_due ON outbox (status, next_attempt_at);
                    CREATE INDEX outbox_ref ON outbox (ref);
                    CREATE TABLE api_keys (
                      id TEXT PRIMARY KEY,
                      name TEXT NOT NULL,
                      api_key TEXT NOT NULL UNIQUE,
                      secret_hash TEXT NOT NULL,
                      created_at {{bigint}} NOT NULL,
                      revoked_at {{bigint}}
                    );
                    CREATE TABLE verify_requests (
                      id TEXT PRIMARY KEY,
                      api_key_id TEXT NOT NULL,
                      brand TEXT NOT NULL,
                      locale TEXT NOT NULL,
                      steps TEXT NOT NULL,
                      channel_timeout INTEGER NOT NULL,
                      code_hash TEXT NOT NULL,
                      client_ref TEXT,
                      status TEXT NOT NULL,
                      current_step INTEGER NOT NULL,
                      step_fired_at {{bigint}} NOT NULL,
                      next_deadline {{bigint}} NOT NULL,
                      wrong_codes INTEGER NOT NULL,
                      created_at {{bigint}} NOT NULL,
                      finished_at {{bigint}},
                      version INTEGER NOT NULL
                    );
                    CREATE INDEX verify_requests_due ON verify_requests (status, next_deadline);
                    CREATE TABLE verify_locks (
                      number TEXT PRIMARY KEY,
                      request_id TEXT NOT NULL
                    );
                    CREATE TABLE verify_number_failures (
                      number TEXT PRIMARY KEY,
                      failures INTEGER NOT NULL,
                      window_started_at {{bigint}} NOT NULL
                    )
                    """),
            Migration(
                version: 3, name: "second factors, pending sign-ins, step-up, bound actions",
                sql: """
                    ALTER TABLE sessions ADD COLUMN mfa_verified_at {{bigint}};
                    ALTER TABLE sessions ADD COLUMN device_id TEXT;
                    CREATE TABLE mfa_factors (
                      id TEXT PRIMARY KEY,
                      user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                      kind TEXT NOT NULL,
                      display_name TEXT NOT NULL,
                      phone TEXT,
                      secret_sealed TEXT,
                      public_key TEXT,
                      credential_id TEXT UNIQUE,
                      sign_count {{bigint}},
                      transports TEXT,
                      backup_eligible INTEGER,
                      backed_up INTEGER,
                      algorithm TEXT,
                      digits INTEGER,
                      period INTEGER,
                      last_step {{bigint}},
                      created_at {{bigint}} NOT NULL,
                      last_used_at {{bigint}},
                      UNIQUE (user_id, phone),
                      UNIQUE (user_id, public_key)
                    );
                    CREATE INDEX mfa_factors_user ON mfa_factors (user_id);
                    CREATE TABLE recovery_codes (
                      id TEXT PRIMARY KEY,
                      factor_id TEXT NOT NULL REFERENCES mfa_factors(id) ON DELETE CASCADE,
                      user_id TEXT NOT NULL,
                      code_hash TEXT NOT NULL,
                      used_at {{bigint}}
                    );
                    CREATE INDEX recovery_codes_factor ON recovery_codes (factor_id, code_hash);
                    CREATE TABLE mfa_enrollments (
                      token_hash TEXT PRIMARY KEY,
                      user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                      kind TEXT NOT NULL,
                      factor_id TEXT NOT NULL,
                      display_name TEXT NOT NULL,
                      phone TEXT,
                      secret_sealed TEXT,
                      algorithm TEXT,
                      digits INTEGER,
                      public_key TEXT,
                      challenge TEXT,
                      verify_request_id TEXT,
                      failures INTEGER NOT NULL DEFAULT 0,
                      created_at {{bigint}} NOT NULL,
                      expires_at {{bigint}} NOT NULL,
                      used_at {{bigint}}
                    );
                    CREATE TABLE pending_credentials (
                      token_hash TEXT PRIMARY KEY,
                      user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                      password_verified_at {{bigint}} NOT NULL,
                      expires_at {{bigint}} NOT NULL,
                      used_at {{bigint}}
                    );
                    CREATE TABLE mfa_challenges (
                      id TEXT PRIMARY KEY,
                      user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                      factor_id TEXT NOT NULL,
                      purpose TEXT NOT NULL,
                      verify_request_id TEXT,
                      challenge TEXT,
                      created_at {{bigint}} NOT NULL,
                      used_at {{bigint}}
                    );
                    CREATE INDEX mfa_challenges_purpose ON mfa_challenges (factor_id, purpose, created_at);
                    CREATE TABLE passkey_logins (
                      challenge TEXT PRIMARY KEY,
                      created_at {{bigint}} NOT NULL,
                      used_at {{bigint}}
                    );
                    CREATE TABLE push_approvals (
                      id TEXT PRIMARY KEY,
                      user_id TEXT REFERENCES users(id) ON DELETE CASCADE,
                      email_key TEXT,
                      factor_id TEXT NOT NULL,
                      purpose TEXT NOT NULL,
                      number INTEGER NOT NULL,
                      choices TEXT NOT NULL,
                      ip TEXT,
                      user_agent TEXT,
                      status TEXT NOT NULL,
                      created_at {{bigint}} NOT NULL,
                      expires_at {{bigint}} NOT NULL,
                      decided_at {{bigint}},
                      consumed_at {{bigint}}
                    );
                    CREATE INDEX push_approvals_factor ON push_approvals (factor_id, status);
                    CREATE INDEX push_approvals_user ON push_approvals (user_id, created_at);
                    CREATE INDEX push_approvals_email ON push_approvals (email_key, created_at);
                    CREATE TABLE authorizations (
                      id TEXT PRIMARY KEY,
                      user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                      factor_id TEXT NOT NULL,
                      action_hash TEXT NOT NULL,
                      summary TEXT NOT NULL,
                      status TEXT NOT NULL,
                      created_at {{bigint}} NOT NULL,
                      expires_at {{bigint}} NOT NULL,
                      approved_at {{bigint}},
                      used_at {{bigint}}
                    )
                    """),
            Migration(
                version: 4, name: "one list codec: session methods joined by commas",
                sql: """
                    UPDATE sessions SET methods = REPLACE(methods, ' ', ',')
                    """),
            Migration(
                version: 5, name: "phone verification conversion per country and hour",
                sql: """
                    CREATE TABLE verify_conversion (
                      country INTEGER NOT NULL,
                      hour {{bigint}} NOT NULL,
                      started INTEGER NOT NULL DEFAULT 0,
                      completed INTEGER NOT NULL DEFAULT 0,
                      PRIMARY KEY (country, hour)
                    );
                    """),
            Migration(
                version: 6, name: "email subjects, provider receipts, the language of each user",
                sql: """
                    ALTER TABLE outbox ADD COLUMN subject TEXT;
                    ALTER TABLE outbox ADD COLUMN provider TEXT;
                    ALTER TABLE outbox ADD COLUMN provider_ref TEXT;
                    ALTER TABLE outbox ADD COLUMN receipt_status TEXT;
                    ALTER TABLE outbox ADD COLUMN receipt_at {{bigint}};
                    CREATE INDEX outbox_provider_ref ON outbox (provider, provider_ref);
                    ALTER TABLE users ADD COLUMN locale TEXT;
                    """),
            Migration(
                version: 7, name: "admin keys, disabled accounts",
                sql: """
                    CREATE TABLE admin_keys (
                      id TEXT PRIMARY KEY,
                      name TEXT NOT NULL,
                      role TEXT NOT NULL,
                      secret_hash TEXT NOT NULL,
                      created_at {{bigint}} NOT NULL,
                      revoked_at {{bigint}}
                    );
                    ALTER TABLE users ADD COLUMN disabled_at {{bigint}};
                    CREATE INDEX audit_log_kind ON audit_log (kind, seq);
                    CREATE INDEX audit_log_at ON audit_log (at);
                    """),
            Migration(
                version: 8, name: "test numbers added by administrators",
                sql: """
                    CREATE TABLE test_numbers (
                      number TEXT PRIMARY KEY,
                      code TEXT NOT NULL,
                      created_at {{bigint}} NOT NULL
                    );
                    """),
            Migration(
                version: 9, name: "answers kept for Idempotency-Key",
                sql: """
                    CREATE TABLE idempotency_keys (
                      id TEXT PRIMARY KEY,
                      fingerprint TEXT NOT NULL,
                      user_id TEXT REFERENCES users(id) ON DELETE CASCADE,
                      status INTEGER,
                      headers TEXT,
                      body TEXT,
                      created_at {{bigint}} NOT NULL,
                      expires_at {{bigint}} NOT NULL
                    );
                    CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
                    CREATE INDEX idempotency_keys_user ON idempotency_keys (user_id);
                    """),
            Migration(
                version: 10, name: "the user of a second factor's phone verifications, queued verification resends",
                sql: """
                    ALTER TABLE verify_requests ADD COLUMN user_id TEXT;
                    CREATE INDEX verify_requests_user ON verify_requests (user_id);
                    UPDATE verify_requests SET user_id = (SELECT c.user_id FROM mfa_challenges c WHERE c.verify_request_id = verify_requests.id LIMIT 1)
                      WHERE user_id IS NULL;
                    UPDATE verify_requests SET user_id = (SELECT e.user_id FROM mfa_enrollments e WHERE e.verify_request_id = verify_requests.id LIMIT 1)
                      WHERE user_id IS NULL;
                    CREATE TABLE email_resends (
                      seq {{id}},
                      email TEXT NOT NULL,
                      ip TEXT NOT NULL,
                      user_agent TEXT,
                      requested_at {{bigint}} NOT NULL
                    );
                    """),
            Migration(
                version: 11, name: "provider callbacks taken once",
                sql: """
                    CREATE TABLE delivery_callbacks (
                      id TEXT PRIMARY KEY,
                      seen_at {{bigint}} NOT NULL
                    );
                    CREATE INDEX delivery_callbacks_seen ON delivery_callbacks (seen_at);
                    """),
            Migration(
                version: 12, name: "password resets, second-factor attempts per flow",
                sql: """
                    ALTER TABLE email_resends ADD COLUMN purpose TEXT NOT NULL DEFAULT 'verify';
                    ALTER TABLE email_resends ADD COLUMN brand TEXT;
                    CREATE TABLE password_resets (
                      user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
                      code_hash TEXT,
                      expires_at {{bigint}} NOT NULL,
                      window_started_at {{bigint}} NOT NULL,
                      failures INTEGER NOT NULL,
                      credential_hash TEXT UNIQUE,
                      credential_expires_at {{bigint}},
                      created_at {{bigint}} NOT NULL
                    );
                    CREATE TABLE mfa_attempts (
                      purpose TEXT PRIMARY KEY,
                      failures INTEGER NOT NULL,
                      updated_at {{bigint}} NOT NULL
                    );
                    """),
            Migration(
                version: 13, name: "device approval keys, released only by the user's check",
                sql: """
                    ALTER TABLE mfa_factors ADD COLUMN approval_key TEXT;
                    ALTER TABLE mfa_factors ADD COLUMN approval_gate TEXT;
                    ALTER TABLE mfa_factors ADD COLUMN biometry TEXT;
                    ALTER TABLE mfa_enrollments ADD COLUMN approval_key TEXT;
                    ALTER TABLE mfa_enrollments ADD COLUMN approval_gate TEXT;
                    ALTER TABLE mfa_enrollments ADD COLUMN biometry TEXT;
                    """),
        ] + (provider + sitekeys + webhooks + staff).sorted { $0.version < $1.version }
}
