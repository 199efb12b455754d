import Core
import Store

/// What other features read of the outbox, and the receipts providers send back.
extension Outbox {
    /// The text and language of the voice call `id`, as stored (empty once delivered outside dev mode); nil for anything else.
    static func voiceCall(_ id: String, on db: any SQLConnection) throws -> (text: String, locale: String)? {
        try db.queryOne("SELECT body, locale FROM outbox WHERE id = $1 AND channel = 'voice'", [.text(id)])
            .map { (try $0.text("body"), try $0.text("locale")) }
    }

    /// How many messages there are by status, channel and provider (`""` for none yet), for `/metrics`.
    static func counts(on db: any SQLConnection) throws -> [(
        status: String, channel: String, provider: String, count: Int64
    )] {
        try db.query(
            "SELECT status, channel, COALESCE(provider, '') AS provider, COUNT(*) AS n FROM outbox GROUP BY status, channel, provider"
        )
        .map { (try $0.text("status"), try $0.text("channel"), try $0.text("provider"), try $0.int("n")) }
    }

    /// Records a provider's delivery receipt on the messages it knows as `reference`;
    /// returns what those messages belong to (`ref`) and their channels.
    static func recordReceipt(
        provider: String, reference: String, status: String, now: Int64,
        on db: any SQLConnection
    ) throws -> [(ref: String?, channel: String)] {
        try db.query(
            """
            UPDATE outbox SET receipt_status = $3, receipt_at = $4 WHERE provider = $1 AND provider_ref = $2 RETURNING ref, channel
            """, [.text(provider), .text(reference), .text(status), .int(now)]
        ).map { (try $0.optionalText("ref"), try $0.text("channel")) }
    }
}
