package import Store

extension Schema {
    /// From 23 on: webhook endpoints (their secrets sealed with the key ring, the previous one kept while a
    /// rotation runs) and one delivery row per event and endpoint, written in the transaction of the event. The
    /// dispatcher looks for the oldest undelivered row of each endpoint several times a second: the index holds
    /// only undelivered rows, so a month of delivered ones does not slow that down. `user_id` finds an erased user's undelivered
    /// messages, to take the personal data out of them.
    static let webhooks: [Migration] = [
        Migration(
            version: 23, name: "webhook endpoints and their deliveries",
            sql: """
                CREATE TABLE webhook_endpoints (
                  id TEXT PRIMARY KEY,
                  url TEXT NOT NULL,
                  description TEXT NOT NULL DEFAULT '',
                  event_types TEXT NOT NULL,
                  personal_data INTEGER NOT NULL DEFAULT 0,
                  secret_sealed TEXT NOT NULL,
                  previous_secret_sealed TEXT,
                  previous_until {{bigint}},
                  status TEXT NOT NULL,
                  disabled_reason TEXT,
                  failing_since {{bigint}},
                  created_at {{bigint}} NOT NULL,
                  updated_at {{bigint}} NOT NULL
                );
                CREATE TABLE webhook_deliveries (
                  seq {{id}},
                  endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
                  message_id TEXT NOT NULL,
                  event_type TEXT NOT NULL,
                  user_id TEXT,
                  body TEXT NOT NULL,
                  created_at {{bigint}} NOT NULL,
                  status TEXT NOT NULL,
                  attempts INTEGER NOT NULL DEFAULT 0,
                  next_attempt_at {{bigint}} NOT NULL,
                  lease_until {{bigint}},
                  last_error TEXT,
                  delivered_at {{bigint}}
                );
                CREATE INDEX webhook_deliveries_queue ON webhook_deliveries (endpoint_id, seq)
                  WHERE status IN ('pending', 'sending');
                CREATE INDEX webhook_deliveries_user ON webhook_deliveries (user_id);
                """)
    ]
}
