import Core
import Foundation
import Messaging
import Store

/// The transactional outbox: a message is written in the same transaction as
/// the change that causes it, so a rolled-back request sends nothing, and a
/// crash after the commit loses nothing (the dispatcher finds it on restart).
///
/// A message is `held` (written ahead, e.g. a later step of a phone
/// verification, released when that step fires), `pending` (due at
/// `next_attempt_at`), `sending` (leased by a dispatcher), `sent`, `failed`
/// (retries used up or refused), `void` (no longer wanted), or `review`
/// (held by the conversion guard until an operator releases or drops it).
///
/// - Important: the text holds the code it carries until delivery; outside
///   dev mode it is replaced once delivered.
struct Outbox {
    /// A stored message.
    struct Message: Sendable {
        let id: MessageID
        let channel: Channel
        let to: String
        let text: String
        let createdAt: Int64
        let status: OutboxStatus
    }

    let random: RandomSource
    /// The words of every message, in the recipient's language.
    var texts = MessageTexts(catalog: .bundled, brand: "Trifactor")

    /// Queues a message at `now` (ms); `held` ones wait for `release(ref:)`.
    /// `ref` names what the message belongs to (`verify:<id>:<step>`), for
    /// release, void and delivery-failure handling.
    func enqueue(
        channel: Channel, to: String, text: String, subject: String? = nil, ref: String? = nil, held: Bool = false,
        review: Bool = false,
        locale: String = "en-us", now: Int64, on db: any SQLConnection
    ) throws {
        let status: OutboxStatus = review ? .review : held ? .held : .pending
        try db.execute(
            """
            INSERT INTO outbox (id, channel, recipient, body, status, created_at, ref, locale, next_attempt_at, subject)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $6, $9)
            """,
            [
                MessageID.random(using: random).sql, .text(channel.rawValue), .text(to), .text(text), status.sql,
                .int(now), SQLValue(ref), .text(locale), SQLValue(subject),
            ])
    }

    /// Queues an email from the catalog: `key.subject` and `key.body` in `language`.
    func enqueueEmail(
        _ key: String, to: String, language: String, values: [String: MessageCatalog.Value] = [:],
        now: Int64, on db: any SQLConnection
    ) throws {
        let email = texts.email(key, language: language, values)
        try enqueue(
            channel: .email, to: to, text: email.body, subject: email.subject, locale: language, now: now, on: db)
    }

    /// Makes the held message `ref` due at `now`; false when there is none.
    @discardableResult
    func release(ref: String, now: Int64, on db: any SQLConnection) throws -> Bool {
        try db.execute(
            "UPDATE outbox SET status = 'pending', next_attempt_at = $2, created_at = $2 WHERE ref = $1 AND status = 'held'",
            [.text(ref), .int(now)]) > 0
    }

    /// Voids the messages `refs` that have not gone out yet and forgets their
    /// text; one being sent right now is not retried after.
    func void(refs: [String], on db: any SQLConnection) throws {
        for ref in refs {
            try db.execute(
                "UPDATE outbox SET status = 'void', body = '' WHERE ref = $1 AND status IN ('held', 'review', 'pending', 'sending')",
                [.text(ref)])
        }
    }

    /// Forgets every message to `recipient` (an erased user's address or number): its
    /// recipient, text and subject emptied, and voided if it had not gone out yet.
    static func erase(recipient: String, on db: any SQLConnection) throws {
        try db.execute(
            """
            UPDATE outbox SET recipient = '', body = '', subject = NULL,
              status = CASE WHEN status IN ('pending', 'held', 'review') THEN 'void' ELSE status END
            WHERE recipient = $1
            """, [.text(recipient)])
    }

    /// Messages newest first (held ones excluded), optionally only those to `recipient`.
    static func list(to recipient: String?, limit: Int, on db: any SQLConnection) throws -> [Message] {
        let rows: [Row]
        let columns = "id, channel, recipient, body, status, created_at"
        if let recipient {
            rows = try db.query(
                "SELECT \(columns) FROM outbox WHERE recipient = $1 AND status NOT IN ('held', 'void') ORDER BY created_at DESC, seq DESC LIMIT $2",
                [.text(recipient), .int(Int64(limit))])
        } else {
            rows = try db.query(
                "SELECT \(columns) FROM outbox WHERE status NOT IN ('held', 'void') ORDER BY created_at DESC, seq DESC LIMIT $1",
                [.int(Int64(limit))])
        }
        return try rows.map {
            Message(
                id: try $0.id("id"), channel: try $0.value("channel"), to: try $0.text("recipient"),
                text: try $0.text("body"),
                createdAt: try $0.int("created_at"), status: try $0.value("status"))
        }
    }
}
