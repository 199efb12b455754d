import Core
import Foundation
import Store

/// A registered webhook endpoint, as the admin API and the CLI show it (never its secret).
struct WebhookEndpoint: Sendable, Equatable {
    /// Whether deliveries go out: an endpoint that failed for the whole retry period is `disabled`.
    enum Status: String, Sendable {
        case enabled, disabled
    }

    let id: String
    let url: String
    let description: String
    /// Event type names, or `*`.
    let eventTypes: [String]
    /// Whether bodies carry the address, browser and audit detail of the event.
    let personalData: Bool
    let status: Status
    let disabledReason: String?
    /// When deliveries started failing (ms), nil while they succeed.
    let failingSince: Int64?
    /// Until when the previous secret signs too (ms), after a rotation.
    let previousSecretUntil: Int64?
    let createdAt: Int64
    let updatedAt: Int64

    /// The endpoint as JSON for the admin API and `--json`.
    var object: [String: Any] {
        var o: [String: Any] = [
            "id": id, "url": url, "description": description, "event_types": eventTypes,
            "personal_data": personalData, "status": status.rawValue,
            "created_at": WebhookQueue.timestamp(createdAt), "updated_at": WebhookQueue.timestamp(updatedAt),
        ]
        if let disabledReason { o["disabled_reason"] = disabledReason }
        if let failingSince { o["failing_since"] = WebhookQueue.timestamp(failingSince) }
        if let previousSecretUntil { o["previous_secret_until"] = WebhookQueue.timestamp(previousSecretUntil) }
        return o
    }
}

/// The webhook tables' reads and writes (only the webhooks feature touches them).
enum WebhookRepository {
    static let columns = """
        id, url, description, event_types, personal_data, status, disabled_reason, failing_since, previous_until,
        created_at, updated_at
        """

    static func endpoint(_ row: Row) throws -> WebhookEndpoint {
        WebhookEndpoint(
            id: try row.text("id"), url: try row.text("url"), description: try row.text("description"),
            eventTypes: try row.text("event_types").split(separator: ",").map(String.init),
            personalData: try row.int("personal_data") != 0,
            status: WebhookEndpoint.Status(rawValue: try row.text("status")) ?? .disabled,
            disabledReason: try row.optionalText("disabled_reason"), failingSince: try row.optionalInt("failing_since"),
            previousSecretUntil: try row.optionalInt("previous_until"), createdAt: try row.int("created_at"),
            updatedAt: try row.int("updated_at"))
    }

    static func all(on db: any SQLConnection) throws -> [WebhookEndpoint] {
        try db.query("SELECT \(columns) FROM webhook_endpoints ORDER BY created_at, id", []).map(endpoint)
    }

    static func find(_ id: String, on db: any SQLConnection) throws -> WebhookEndpoint? {
        try db.queryOne("SELECT \(columns) FROM webhook_endpoints WHERE id = $1", [.text(id)]).map(endpoint)
    }

    /// The sealed secrets of `id` (base64): the current one, and the previous one while it still signs.
    static func sealedSecrets(_ id: String, now: Int64, on db: any SQLConnection) throws -> [String] {
        guard
            let row = try db.queryOne(
                "SELECT secret_sealed, previous_secret_sealed, previous_until FROM webhook_endpoints WHERE id = $1",
                [.text(id)])
        else { return [] }
        var sealed = [try row.text("secret_sealed")]
        if let previous = try row.optionalText("previous_secret_sealed"),
            (try row.optionalInt("previous_until")) ?? 0 > now
        {
            sealed.append(previous)
        }
        return sealed
    }

    /// Undelivered messages of `id`: waiting, and failed for good.
    static func counts(_ id: String, on db: any SQLConnection) throws -> (pending: Int, failed: Int) {
        let rows = try db.query(
            "SELECT status, COUNT(*) AS n FROM webhook_deliveries WHERE endpoint_id = $1 AND status IN ('pending', 'sending', 'failed') GROUP BY status",
            [.text(id)])
        var pending = 0
        var failed = 0
        for row in rows {
            let n = Int(try row.int("n"))
            if try row.text("status") == "failed" { failed += n } else { pending += n }
        }
        return (pending, failed)
    }
}
