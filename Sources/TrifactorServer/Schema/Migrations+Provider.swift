package import Store

extension Schema {
    /// The OpenID Provider's migrations, from 14 on: clients, signing keys, flows, grants, consents; pushed
    /// authorization requests; DPoP; FAPI 2.0 clients; authorization details; device codes.
    static let provider: [Migration] = [
        Migration(
            version: 14, name: "the OpenID Provider: clients, signing keys, authorization flows, grants, consents",
            sql: """
                CREATE TABLE oidc_clients (
                  id TEXT PRIMARY KEY,
                  name TEXT NOT NULL,
                  secret_hash TEXT,
                  auth_method TEXT NOT NULL,
                  redirect_uris TEXT NOT NULL,
                  post_logout_redirect_uris TEXT NOT NULL,
                  grant_types TEXT NOT NULL,
                  scopes TEXT NOT NULL,
                  first_party INTEGER NOT NULL,
                  profile_in_id_token INTEGER NOT NULL,
                  id_token_alg TEXT NOT NULL,
                  jwks TEXT,
                  logo_uri TEXT,
                  backchannel_logout_uri TEXT,
                  registration_token_hash TEXT UNIQUE,
                  registered_by TEXT NOT NULL,
                  created_at {{bigint}} NOT NULL,
                  updated_at {{bigint}} NOT NULL
                );
                CREATE TABLE oidc_signing_keys (
                  kid TEXT PRIMARY KEY,
                  alg TEXT NOT NULL,
                  secret_sealed TEXT NOT NULL,
                  public_jwk TEXT NOT NULL,
                  created_at {{bigint}} NOT NULL,
                  active_from {{bigint}} NOT NULL,
                  retired_at {{bigint}}
                );
                CREATE TABLE oidc_flows (
                  id TEXT PRIMARY KEY,
                  client_id TEXT NOT NULL REFERENCES oidc_clients(id) ON DELETE CASCADE,
                  request TEXT NOT NULL,
                  status TEXT NOT NULL,
                  progress TEXT NOT NULL,
                  user_id TEXT REFERENCES users(id) ON DELETE CASCADE,
                  session_id TEXT,
                  code_hash TEXT UNIQUE,
                  code_expires_at {{bigint}},
                  grant_id TEXT,
                  created_at {{bigint}} NOT NULL,
                  expires_at {{bigint}} NOT NULL
                );
                CREATE INDEX oidc_flows_expiry ON oidc_flows (expires_at);
                CREATE TABLE oidc_grants (
                  id TEXT PRIMARY KEY,
                  client_id TEXT NOT NULL REFERENCES oidc_clients(id) ON DELETE CASCADE,
                  user_id TEXT REFERENCES users(id) ON DELETE CASCADE,
                  session_id TEXT,
                  scope TEXT NOT NULL,
                  resource TEXT,
                  acr TEXT,
                  amr TEXT NOT NULL,
                  auth_time {{bigint}},
                  refresh_hash TEXT UNIQUE,
                  refresh_expires_at {{bigint}},
                  previous_refresh_hash TEXT,
                  created_at {{bigint}} NOT NULL,
                  revoked_at {{bigint}}
                );
                CREATE INDEX oidc_grants_user ON oidc_grants (user_id);
                CREATE INDEX oidc_grants_session ON oidc_grants (session_id);
                CREATE TABLE oidc_spent_refresh_tokens (
                  token_hash TEXT PRIMARY KEY,
                  grant_id TEXT NOT NULL,
                  spent_at {{bigint}} NOT NULL
                );
                CREATE TABLE oidc_consents (
                  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                  client_id TEXT NOT NULL REFERENCES oidc_clients(id) ON DELETE CASCADE,
                  scope TEXT NOT NULL,
                  granted_at {{bigint}} NOT NULL,
                  PRIMARY KEY (user_id, client_id)
                );
                CREATE TABLE oidc_revoked_tokens (
                  jti TEXT PRIMARY KEY,
                  expires_at {{bigint}} NOT NULL
                );
                CREATE TABLE oidc_client_assertions (
                  client_id TEXT NOT NULL,
                  jti TEXT NOT NULL,
                  expires_at {{bigint}} NOT NULL,
                  PRIMARY KEY (client_id, jti)
                );
                """),
        Migration(
            version: 15, name: "pushed authorization requests (RFC 9126)",
            sql: """
                CREATE TABLE oidc_pushed_requests (
                  id TEXT PRIMARY KEY,
                  client_id TEXT NOT NULL REFERENCES oidc_clients(id) ON DELETE CASCADE,
                  parameters TEXT NOT NULL,
                  expires_at {{bigint}} NOT NULL
                );
                """),
        Migration(
            version: 16, name: "DPoP-bound grants and proofs (RFC 9449), FAPI 2.0 and DPoP-bound clients",
            sql: """
                CREATE TABLE oidc_dpop_proofs (
                  id TEXT PRIMARY KEY,
                  expires_at {{bigint}} NOT NULL
                );
                ALTER TABLE oidc_grants ADD COLUMN dpop_jkt TEXT;
                ALTER TABLE oidc_clients ADD COLUMN fapi2 INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE oidc_clients ADD COLUMN dpop_bound INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE oidc_pushed_requests ADD COLUMN origin TEXT;
                CREATE INDEX oidc_pushed_requests_client ON oidc_pushed_requests (client_id, origin, expires_at);
                """),
        Migration(
            version: 17, name: "authorization details (RFC 9396) on grants, with the approval that spends them",
            sql: """
                ALTER TABLE oidc_grants ADD COLUMN authorization_details TEXT;
                ALTER TABLE oidc_grants ADD COLUMN authorization_id TEXT;
                """),
        Migration(
            version: 18, name: "device authorization grant (RFC 8628)",
            sql: """
                CREATE TABLE oidc_device_codes (
                  device_code_hash TEXT PRIMARY KEY,
                  user_code_hash TEXT NOT NULL UNIQUE,
                  client_id TEXT NOT NULL REFERENCES oidc_clients(id) ON DELETE CASCADE,
                  origin TEXT NOT NULL,
                  scope TEXT NOT NULL,
                  status TEXT NOT NULL,
                  user_id TEXT REFERENCES users(id) ON DELETE CASCADE,
                  session_id TEXT,
                  acr TEXT,
                  amr TEXT,
                  auth_time {{bigint}},
                  grant_id TEXT,
                  poll_interval INTEGER NOT NULL,
                  last_polled_at {{bigint}},
                  expires_at {{bigint}} NOT NULL,
                  created_at {{bigint}} NOT NULL
                );
                CREATE INDEX oidc_device_codes_client ON oidc_device_codes (client_id, origin, status, expires_at);
                CREATE INDEX oidc_device_codes_expiry ON oidc_device_codes (expires_at);
                """),
        Migration(
            version: 19, name: "back-channel authentication requests (OpenID CIBA), approved on the user's device",
            sql: """
                CREATE TABLE oidc_backchannel_requests (
                  id TEXT PRIMARY KEY,
                  client_id TEXT NOT NULL REFERENCES oidc_clients(id) ON DELETE CASCADE,
                  user_id TEXT REFERENCES users(id) ON DELETE CASCADE,
                  scope TEXT NOT NULL,
                  acr TEXT,
                  binding_message TEXT,
                  approval_id TEXT,
                  status TEXT NOT NULL,
                  interval_seconds INTEGER NOT NULL,
                  polled_at {{bigint}},
                  created_at {{bigint}} NOT NULL,
                  expires_at {{bigint}} NOT NULL
                );
                CREATE INDEX oidc_backchannel_requests_expiry ON oidc_backchannel_requests (expires_at);
                CREATE INDEX oidc_backchannel_requests_client ON oidc_backchannel_requests (client_id, created_at);
                ALTER TABLE push_approvals ADD COLUMN message TEXT;
                ALTER TABLE oidc_clients ADD COLUMN ciba_mode TEXT;
                ALTER TABLE oidc_clients ADD COLUMN ciba_endpoint TEXT;
                """),
        Migration(
            version: 21,
            name: "used pushed requests kept for the page of their link; CIBA approved by a link texted to the user",
            sql: """
                ALTER TABLE oidc_pushed_requests ADD COLUMN used_at {{bigint}};
                ALTER TABLE oidc_backchannel_requests ADD COLUMN link_hash TEXT;
                CREATE UNIQUE INDEX oidc_backchannel_requests_link ON oidc_backchannel_requests (link_hash);
                ALTER TABLE oidc_clients ADD COLUMN ciba_text INTEGER NOT NULL DEFAULT 0;
                """),
        Migration(
            version: 22, name: "a payment's action on its push approval, shown and signed on the device",
            sql: """
                ALTER TABLE push_approvals ADD COLUMN action TEXT;
                """),
    ]
}
