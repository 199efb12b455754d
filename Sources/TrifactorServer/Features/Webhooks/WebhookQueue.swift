import Core
import Crypto
import Foundation
import Store

/// Writes the webhook messages of an audit event: one delivery row per
/// enabled endpoint that asked for its type, in the transaction that
/// records the event. A rolled-back request thus announces nothing, and a
/// committed one is announced even if the instance dies right after (the
/// dispatcher of any instance finds the rows). The body is built here, once,
/// so every retry sends the same bytes under the same `webhook-id`.
///
/// Why a table of its own rather than the outbox: deliveries to one endpoint
/// go strictly in order (the outbox sends whatever is due), are retried for
/// a day rather than a few times, and fail per endpoint, not per message.
enum WebhookQueue {
    /// Where message ids come from: the audit log is called without a random source, so the CSPRNG itself.
    static let random: RandomSource = SecureRandom.source

    /// Queues `event` (recorded at `at`, ms) to the endpoints that want it; nothing for kinds no webhook announces.
    /// `subject` names the user when the entry itself must not (an erased account's deletion).
    static func enqueue(_ event: AuditEvent, subject: String?, at: Int64, on db: any SQLConnection) throws {
        guard let type = WebhookEventType(audit: event.kind) else { return }
        // A right password whose second factor is still due is not a sign-in yet: announced once, with its session.
        if event.kind == .signInSucceeded && event.detail == SessionService.secondFactorDue { return }
        let endpoints = try db.query(
            "SELECT id, event_types, personal_data FROM webhook_endpoints WHERE status = 'enabled'", [])
        let wanted = try endpoints.filter { row in
            let types = try row.text("event_types").split(separator: ",").map(String.init)
            return types.contains(type.rawValue) || types.contains(WebhookEventType.wildcard)
        }
        guard !wanted.isEmpty else { return }
        // One id for the event, the same to every endpoint and on every retry: receivers deduplicate on it.
        let id = "msg_" + random.alphanumerics(24)
        var bodies: [Bool: String] = [:]
        for row in wanted {
            let personal = try row.int("personal_data") != 0
            let body = try bodies[personal] ?? payload(type, event, subject: subject, at: at, personal: personal)
            bodies[personal] = body
            try db.execute(
                """
                INSERT INTO webhook_deliveries (endpoint_id, message_id, event_type, body, created_at, status, next_attempt_at, user_id)
                VALUES ($1, $2, $3, $4, $5, 'pending', $5, $6)
                """,
                [
                    .text(try row.text("id")), .text(id), .text(type.rawValue), .text(body), .int(at),
                    SQLValue(event.userID ?? subject),
                ])
        }
    }

    /// The Standard Webhooks body: `type`, `timestamp` (the event's, RFC 3339) and `data`. `data` always holds
    /// the user's id (an opaque id, no personal data by itself) and the audit kind and outcome; the address,
    /// browser and the audit detail (which may name a phone number or an email) only when `personal`.
    static func payload(
        _ type: WebhookEventType, _ event: AuditEvent, subject: String?, at: Int64, personal: Bool
    ) throws -> String {
        var data: [String: Any] = ["audit_kind": event.kind.rawValue, "outcome": event.outcome.rawValue]
        if let user = event.userID ?? subject { data["user_id"] = user }
        if personal {
            if let ip = event.ip { data["ip"] = ip }
            if let agent = event.userAgent { data["user_agent"] = String(agent.prefix(512)) }
            if let detail = event.detail { data["detail"] = detail }
        }
        let object: [String: Any] = ["type": type.rawValue, "timestamp": timestamp(at), "data": data]
        let bytes = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The members of `data` that only endpoints asking for personal data get.
    static let personalMembers = ["ip", "user_agent", "detail"]

    /// Takes the personal data (address, browser, detail) out of the undelivered messages about an erased
    /// user; their ids, types and the user's opaque id stay, so receivers still learn of the events, and
    /// of the deletion, under the same ids.
    static func erase(userID: String, on db: any SQLConnection) throws {
        let rows = try db.query(
            "SELECT seq, body FROM webhook_deliveries WHERE user_id = $1 AND status IN ('pending', 'sending')",
            [.text(userID)])
        for row in rows {
            guard
                var object = (try? JSONSerialization.jsonObject(with: Data(try row.text("body").utf8)))
                    as? [String: Any],
                var data = object["data"] as? [String: Any], personalMembers.contains(where: { data[$0] != nil })
            else { continue }
            for member in personalMembers { data.removeValue(forKey: member) }
            object["data"] = data
            let bytes = try JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
            try db.execute(
                "UPDATE webhook_deliveries SET body = $2 WHERE seq = $1",
                [.int(try row.int("seq")), .text(String(decoding: bytes, as: UTF8.self))])
        }
    }

    /// `2026-12-06T19:50:00.123Z` for `millis`.
    static func timestamp(_ millis: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(millis: millis))
    }
}
