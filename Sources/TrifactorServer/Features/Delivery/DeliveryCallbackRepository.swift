import Store

/// The `delivery_callbacks` table: each provider callback taken once, by the
/// hash of what makes it unique (its signature), for `DeliveryRoutes.rememberedFor`.
enum DeliveryCallbackRepository {
    /// Remembers the callback `hash` seen at `now`; false when it was seen before (a replay).
    static func remember(_ hash: String, now: Int64, on db: any SQLConnection) throws -> Bool {
        try db.execute(
            "INSERT INTO delivery_callbacks (id, seen_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING",
            [.text(hash), .int(now)]) == 1
    }
}
