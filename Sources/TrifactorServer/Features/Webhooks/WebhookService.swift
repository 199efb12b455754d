import Core
import Crypto
import Foundation
import Messaging
import Store

/// Why a webhook change was refused.
enum WebhookFailure: Error, Equatable {
    /// No endpoint has this id.
    case notFound
    /// Secrets are sealed with the key ring, and there is no key file.
    case noKeyFile
}

/// Registers, changes and removes webhook endpoints, for the admin API and
/// `trifactord webhooks`. Secrets are made here (`whsec_` and 24 random
/// bytes), shown once and stored sealed with the key ring, bound to the
/// endpoint's id; a rotation keeps the previous secret signing beside the new
/// one for `rotationOverlap`, so receivers can switch without losing a
/// message. Every change is audited in its transaction.
struct WebhookService: Sendable {
    let transactions: Transactions
    let clock: Clock
    let random: RandomSource
    let sealer: KeyRing?
    /// Checks URLs as deliveries will (scheme, address).
    let sender: WebhookSender
    /// How long the previous secret still signs after a rotation.
    var rotationOverlap: Int64 = 86_400_000

    /// What a create or an update asks for; nil leaves a value as it is (create: its default).
    struct Draft: Sendable {
        var url: String?
        var description: String?
        var eventTypes: [String]?
        var personalData: Bool?
        var enabled: Bool?
    }

    /// An endpoint with its new secret, shown only now.
    struct Registered: Sendable {
        let endpoint: WebhookEndpoint
        let secret: String
    }

    func list() throws -> [WebhookEndpoint] {
        try transactions.read { try WebhookRepository.all(on: $0) }
    }

    /// - Throws: `WebhookFailure.notFound`.
    func find(_ id: String) throws -> WebhookEndpoint {
        guard let endpoint = try transactions.read({ try WebhookRepository.find(id, on: $0) }) else {
            throw WebhookFailure.notFound
        }
        return endpoint
    }

    /// Registers an endpoint; audited as `webhook.created` by `actor`.
    /// - Throws: `CommonFailure.invalidFields` for a missing or refused URL or unknown event types,
    ///   `WebhookFailure.noKeyFile`.
    func create(_ draft: Draft, audit: AuditContext, actor: String) throws -> Registered {
        guard let url = draft.url else { throw CommonFailure.invalid("url", "is required") }
        try check(url: url)
        guard let types = draft.eventTypes else { throw CommonFailure.invalid("event_types", "is required") }
        let checked = try WebhookEventType.check(types)
        let id = "ep_" + random.alphanumerics(22)
        let secret = WebhookSignature.newSecret(random.bytes(24))
        let sealed = try seal(secret, id: id)
        let now = clock.now().millis
        let endpoint = try transactions.write { db in
            try db.execute(
                """
                INSERT INTO webhook_endpoints (id, url, description, event_types, personal_data, secret_sealed, status, created_at, updated_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
                """,
                [
                    .text(id), .text(url), .text(String((draft.description ?? "").prefix(200))),
                    .text(checked.joined(separator: ",")), .int(draft.personalData == true ? 1 : 0), .text(sealed),
                    .text(draft.enabled == false ? "disabled" : "enabled"), .int(now),
                ])
            try AuditLog.append(
                audit.event(
                    .webhookCreated, .success, detail: "\(actor) endpoint=\(id) types=\(checked.joined(separator: ","))"
                ),
                at: now, on: db)
            return try WebhookRepository.find(id, on: db)
        }
        guard let endpoint else { throw WebhookFailure.notFound }
        return Registered(endpoint: endpoint, secret: secret)
    }

    /// Changes what `draft` names; enabling an endpoint clears its failure and resumes its queue where it
    /// stopped. Audited as `webhook.updated`.
    /// - Throws: `WebhookFailure.notFound`, `CommonFailure.invalidFields`.
    func update(_ id: String, with draft: Draft, audit: AuditContext, actor: String) throws -> WebhookEndpoint {
        if let url = draft.url { try check(url: url) }
        let types = try draft.eventTypes.map { try WebhookEventType.check($0) }
        let now = clock.now().millis
        return try transactions.write { db in
            guard let current = try WebhookRepository.find(id, on: db) else { throw WebhookFailure.notFound }
            let enabled = draft.enabled ?? (current.status == .enabled)
            let resumes = enabled && current.status != .enabled
            try db.execute(
                """
                UPDATE webhook_endpoints SET url = $2, description = $3, event_types = $4, personal_data = $5,
                  status = $6, disabled_reason = $7, failing_since = $8, updated_at = $9
                WHERE id = $1
                """,
                [
                    .text(id), .text(draft.url ?? current.url),
                    .text(String((draft.description ?? current.description).prefix(200))),
                    .text((types ?? current.eventTypes).joined(separator: ",")),
                    .int((draft.personalData ?? current.personalData) ? 1 : 0),
                    .text(enabled ? "enabled" : "disabled"),
                    enabled ? .null : SQLValue(current.disabledReason ?? "disabled by \(actor)"),
                    resumes ? .null : SQLValue(current.failingSince), .int(now),
                ])
            if resumes {
                // Messages due long ago go out now, in order, rather than after their last backoff.
                try db.execute(
                    "UPDATE webhook_deliveries SET next_attempt_at = $2 WHERE endpoint_id = $1 AND status = 'pending'",
                    [.text(id), .int(now)])
            }
            try AuditLog.append(
                audit.event(
                    .webhookUpdated, .success,
                    detail: "\(actor) endpoint=\(id) status=\(enabled ? "enabled" : "disabled")"),
                at: now, on: db)
            guard let updated = try WebhookRepository.find(id, on: db) else { throw WebhookFailure.notFound }
            return updated
        }
    }

    /// A new secret for `id`, shown only now; the previous one signs too for `rotationOverlap`.
    /// Audited as `webhook.secret_rotated`.
    /// - Throws: `WebhookFailure.notFound`, `WebhookFailure.noKeyFile`.
    func rotateSecret(_ id: String, audit: AuditContext, actor: String) throws -> String {
        let secret = WebhookSignature.newSecret(random.bytes(24))
        let sealed = try seal(secret, id: id)
        let now = clock.now().millis
        try transactions.write { db in
            guard
                try db.execute(
                    """
                    UPDATE webhook_endpoints SET previous_secret_sealed = secret_sealed, previous_until = $3,
                      secret_sealed = $2, updated_at = $4 WHERE id = $1
                    """, [.text(id), .text(sealed), .int(now + rotationOverlap), .int(now)]) == 1
            else { throw WebhookFailure.notFound }
            try AuditLog.append(
                audit.event(.webhookSecretRotated, .success, detail: "\(actor) endpoint=\(id)"), at: now, on: db)
        }
        return secret
    }

    /// Removes `id` with its undelivered messages; audited as `webhook.deleted`.
    /// - Throws: `WebhookFailure.notFound`.
    func delete(_ id: String, audit: AuditContext, actor: String) throws {
        let now = clock.now().millis
        try transactions.write { db in
            // The cascade would do it; said here so that it reads as intended.
            try db.execute("DELETE FROM webhook_deliveries WHERE endpoint_id = $1", [.text(id)])
            guard try db.execute("DELETE FROM webhook_endpoints WHERE id = $1", [.text(id)]) == 1 else {
                throw WebhookFailure.notFound
            }
            try AuditLog.append(
                audit.event(.webhookDeleted, .success, detail: "\(actor) endpoint=\(id)"), at: now, on: db)
        }
    }

    /// - Throws: `CommonFailure.invalidFields` naming `url` when deliveries to it would be refused.
    private func check(url text: String) throws {
        guard text.count <= 2048, let url = URL(string: text), url.host != nil else {
            throw CommonFailure.invalid("url", "must be an https URL")
        }
        if let refusal = sender.refusal(of: url) {
            throw CommonFailure.invalid("url", String(refusal.dropFirst("webhook: ".count)))
        }
    }

    /// `secret` sealed for endpoint `id`, base64 (bound to the id, so a sealed value cannot be moved to another).
    private func seal(_ secret: String, id: String) throws -> String {
        guard let sealer else { throw WebhookFailure.noKeyFile }
        return Data(try sealer.seal(Array(secret.utf8), associatedData: Self.associatedData(id))).base64EncodedString()
    }

    /// What a secret is sealed with: the form `SecretResealer` uses for every sealed secret, so it reseals these too.
    static func associatedData(_ id: String) -> [UInt8] { TOTPFactor.associatedData(FactorID(id)) }
}
