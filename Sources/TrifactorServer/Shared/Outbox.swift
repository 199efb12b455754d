import Foundation
import Store

/// The transactional outbox: a message is written in the same transaction as
/// the change that causes it, so a rolled-back request sends nothing.
///
/// - Important: the text of a pending message holds the code it carries; it
///   is needed to deliver it. Nothing but the delivery path and dev mode reads it.
struct Outbox {
    /// A message to deliver.
    struct Message: Sendable {
        let id: String
        let channel: String
        let to: String
        let text: String
        let createdAt: Int64
        let status: String
    }

    let env: Environment

    /// Queues a message. In dev mode the dev inbox is the delivery: the
    /// message is marked sent and printed to the log.
    func enqueue(channel: String, to: String, text: String, on db: any SQLConnection) throws {
        let id = env.newID()
        let status = env.configuration.dev ? "sent" : "pending"
        try db.execute(
            "INSERT INTO outbox (id, channel, recipient, body, status, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
            [.text(id), .text(channel), .text(to), .text(text), .text(status), .int(env.nowMillis)])
        if env.configuration.dev {
            env.logger.log("info", "dev_outbox", ["id": .string(id), "channel": .string(channel), "to": .string(to), "text": .string(text)])
        }
    }

    /// Messages newest first, optionally only those to `recipient`.
    func list(to recipient: String?, limit: Int, on db: any SQLConnection) throws -> [Message] {
        let rows: [Row]
        if let recipient {
            rows = try db.query(
                "SELECT id, channel, recipient, body, status, created_at FROM outbox WHERE recipient = $1 ORDER BY seq DESC LIMIT $2",
                [.text(recipient), .int(Int64(limit))])
        } else {
            rows = try db.query(
                "SELECT id, channel, recipient, body, status, created_at FROM outbox ORDER BY seq DESC LIMIT $1", [.int(Int64(limit))])
        }
        return try rows.map {
            Message(id: try $0.text("id"), channel: try $0.text("channel"), to: try $0.text("recipient"), text: try $0.text("body"),
                    createdAt: try $0.int("created_at"), status: try $0.text("status"))
        }
    }
}
