import Core
import Crypto
import Foundation
import Logging
import Messaging
import Metrics
import Store

/// Delivers webhook messages. Each pass claims, with a lease, the oldest
/// undelivered message of every enabled endpoint whose turn it is, so one
/// endpoint's messages go one at a time and in order, and two instances
/// never send the same one at once; the posts run in parallel (one slow
/// endpoint does not hold back the others), outside any transaction, and
/// the outcome is recorded only while the lease is still this dispatcher's.
///
/// A message whose sender died mid-post is claimed again when its lease runs
/// out and sent again under the same `webhook-id`: delivery is at least once,
/// and a receiver that deduplicates on the id sees each event once.
///
/// A 5xx, 408, 429, timeout or refused connection is retried with backoff
/// (1 s doubling to `maxBackoff`); once an endpoint has failed for
/// `retryFor` it is disabled and audited (`webhook.disabled`), its queue kept,
/// the message it was failing on first, for when an operator enables it again.
/// A message refused for good (another 4xx, a redirect, a refused address) is
/// marked failed and audited, and the next one goes; an endpoint that refuses
/// every message for `retryFor` is disabled too.
final class WebhookDispatcher: Sendable {
    private let transactions: Transactions
    private let clock: Clock
    private let sender: WebhookSender
    private let sealer: KeyRing
    private let logger: Logger
    /// How long an endpoint may fail before it is disabled (ms): a day unless the operator says otherwise.
    private let retryFor: Int64
    /// The longest wait between two tries of one message (ms).
    private let maxBackoff: Int64
    /// Twice the sender's timeout and 5 s more, to record the outcome: a lease that ran out during a post
    /// would let another instance post the message again (under the same id, so harmless, but wasted). Short,
    /// because it is also how long a message claimed by an instance that died waits before another sends it.
    let leaseMillis: Int64

    init(
        transactions: Transactions, clock: Clock, sender: WebhookSender, sealer: KeyRing, logger: Logger,
        retryFor: Double, maxBackoff: Double = 900
    ) {
        self.transactions = transactions
        self.clock = clock
        self.sender = sender
        self.sealer = sealer
        self.logger = logger
        self.retryFor = Int64(retryFor * 1000)
        self.maxBackoff = Int64(maxBackoff * 1000)
        leaseMillis = Int64(sender.timeout * 2 + 5) * 1000
    }

    /// One claimed message, with what signing and posting it needs.
    private struct Claimed: Sendable {
        let seq: Int64
        let endpoint: String
        let url: String
        let messageID: String
        let body: String
        let attempts: Int
        let secrets: [String]
    }

    /// Delivers what is due now; returns how many messages were handled.
    @discardableResult
    func runOnce() throws -> Int {
        let now = clock.now().millis
        // The head of each enabled endpoint's queue, if it is due (or its lease ran out).
        let heads = """
            SELECT MIN(d.seq) FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
            WHERE d.status IN ('pending', 'sending') AND e.status = 'enabled' GROUP BY d.endpoint_id
            """
        let due = "((status = 'pending' AND next_attempt_at <= $1) OR (status = 'sending' AND lease_until < $1))"
        // Most passes find nothing: look without the write lock first.
        let any = try transactions.read { db in
            try db.queryOne(
                "SELECT seq FROM webhook_deliveries WHERE seq IN (\(heads)) AND \(due) LIMIT 1", [.int(now)])
                != nil
        }
        guard any else { return 0 }
        let lease = now + leaseMillis
        let claimed = try transactions.write { db -> [Claimed] in
            let rows = try db.query(
                """
                UPDATE webhook_deliveries SET status = 'sending', lease_until = $2
                WHERE seq IN (\(heads)) AND \(due)
                RETURNING seq, endpoint_id, message_id, body, attempts
                """, [.int(now), .int(lease)])
            return try rows.map { row in
                let endpoint = try row.text("endpoint_id")
                let url = try db.queryOne("SELECT url FROM webhook_endpoints WHERE id = $1", [.text(endpoint)])
                return Claimed(
                    seq: try row.int("seq"), endpoint: endpoint, url: try url?.text("url") ?? "",
                    messageID: try row.text("message_id"), body: try row.text("body"),
                    attempts: Int(try row.int("attempts")) + 1,
                    secrets: try WebhookRepository.sealedSecrets(endpoint, now: now, on: db))
            }
        }
        let outcomes = Outcomes(count: claimed.count)
        DispatchQueue.concurrentPerform(iterations: claimed.count) { i in
            outcomes.set(i, post(claimed[i]))
        }
        for (i, message) in claimed.enumerated() {
            let outcome = outcomes.get(i)
            let label =
                switch outcome {
                case .success: "sent"
                case .failure(let failure): failure.retryable ? "retry" : "failed"
                }
            ServerMetrics.deliveries.add(["webhook", "", label])
            do {
                try record(message, lease: lease, outcome: outcome)
            } catch {
                // The lease runs out and the message is sent again, under the same id.
                logger.log(
                    .error, "webhook_record_failed",
                    ["endpoint": .string(message.endpoint), "error": .string("\(error)")])
            }
        }
        return claimed.count
    }

    /// Signs and posts one message; the signature's timestamp is now, as receivers check it against their clock.
    private func post(_ message: Claimed) -> Result<Int, DeliveryError> {
        let secrets = message.secrets.compactMap { sealed -> String? in
            guard let bytes = Data(base64Encoded: sealed),
                let plain = try? sealer.open(
                    Array(bytes), associatedData: WebhookService.associatedData(message.endpoint))
            else { return nil }
            return String(decoding: plain, as: UTF8.self)
        }
        guard !secrets.isEmpty, let url = URL(string: message.url) else {
            return .failure(DeliveryError(reason: "webhook: the endpoint's secret cannot be opened", retryable: true))
        }
        let timestamp = clock.now().millis / 1000
        let body = Data(message.body.utf8)
        let headers = [
            "webhook-id: \(message.messageID)", "webhook-timestamp: \(timestamp)",
            "webhook-signature: \(WebhookSignature.header(id: message.messageID, timestamp: timestamp, body: body, secrets: secrets))",
        ]
        do {
            return .success(try sender.post(url, headers: headers, body: body))
        } catch {
            return .failure(error)
        }
    }

    /// Records the outcome while the lease is still ours (another instance may have taken an expired one).
    private func record(_ message: Claimed, lease: Int64, outcome: Result<Int, DeliveryError>) throws {
        try transactions.write { db in
            let now = clock.now().millis
            let mine = "seq = $1 AND status = 'sending' AND lease_until = $2"
            switch outcome {
            case .success:
                // Delivered: the body (which may hold personal data) is not kept.
                guard
                    try db.execute(
                        "UPDATE webhook_deliveries SET status = 'sent', delivered_at = $3, attempts = $4, body = '', lease_until = NULL WHERE \(mine)",
                        [.int(message.seq), .int(lease), .int(now), .int(Int64(message.attempts))]) == 1
                else { return }
                try db.execute(
                    "UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL",
                    [.text(message.endpoint)])
            case .failure(let failure) where failure.retryable:
                let since =
                    try db.queryOne(
                        "SELECT failing_since FROM webhook_endpoints WHERE id = $1", [.text(message.endpoint)]
                    ).flatMap { try $0.optionalInt("failing_since") } ?? now
                if now - since >= retryFor {
                    try giveUp(message, lease: lease, reason: failure.reason, now: now, on: db)
                    return
                }
                let delay = min(maxBackoff, Int64(1000) << min(message.attempts - 1, 20))
                guard
                    try db.execute(
                        "UPDATE webhook_deliveries SET status = 'pending', attempts = $3, next_attempt_at = $4, last_error = $5, lease_until = NULL WHERE \(mine)",
                        [
                            .int(message.seq), .int(lease), .int(Int64(message.attempts)), .int(now + delay),
                            .text(String(failure.reason.prefix(200))),
                        ]) == 1
                else { return }
                try db.execute(
                    "UPDATE webhook_endpoints SET failing_since = $2 WHERE id = $1 AND failing_since IS NULL",
                    [.text(message.endpoint), .int(now)])
            case .failure(let failure):
                guard
                    try db.execute(
                        "UPDATE webhook_deliveries SET status = 'failed', attempts = $3, last_error = $4, body = '', lease_until = NULL WHERE \(mine)",
                        [
                            .int(message.seq), .int(lease), .int(Int64(message.attempts)),
                            .text(String(failure.reason.prefix(200))),
                        ]) == 1
                else { return }
                try AuditLog.append(
                    AuditEvent(
                        kind: .webhookDeliveryFailed, outcome: .failure,
                        detail: "endpoint=\(message.endpoint) id=\(message.messageID): \(failure.reason.prefix(120))"),
                    at: now, on: db)
                // An endpoint that refuses every message (a 4xx, a redirect) is failing as surely as one that is down:
                // after the retry period of nothing but failures it is disabled too, so no event is thrown away for
                // ever; its later messages wait for it to be enabled again.
                let since = try db.queryOne(
                    "SELECT failing_since FROM webhook_endpoints WHERE id = $1", [.text(message.endpoint)]
                ).flatMap { try $0.optionalInt("failing_since") }
                if let since, now - since >= retryFor {
                    try disable(message, reason: failure.reason, now: now, on: db)
                } else if since == nil {
                    try db.execute(
                        "UPDATE webhook_endpoints SET failing_since = $2 WHERE id = $1 AND failing_since IS NULL",
                        [.text(message.endpoint), .int(now)])
                }
            }
        }
    }

    /// The endpoint failed for the whole retry period: it is disabled and audited, and this message waits at the head
    /// of its queue with the later ones, so enabling the endpoint again sends it first: an outage loses no event.
    private func giveUp(_ message: Claimed, lease: Int64, reason: String, now: Int64, on db: any SQLConnection) throws {
        guard
            try db.execute(
                "UPDATE webhook_deliveries SET status = 'pending', attempts = $3, last_error = $4, next_attempt_at = $5, lease_until = NULL WHERE seq = $1 AND status = 'sending' AND lease_until = $2",
                [
                    .int(message.seq), .int(lease), .int(Int64(message.attempts)), .text(String(reason.prefix(200))),
                    .int(now),
                ]) == 1
        else { return }
        try disable(message, reason: reason, now: now, on: db)
    }

    /// Disables the endpoint of `message`, which failed for the whole retry period, and audits it.
    private func disable(_ message: Claimed, reason: String, now: Int64, on db: any SQLConnection) throws {
        let hours = Double(retryFor) / 3_600_000
        try db.execute(
            "UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = $2, updated_at = $3 WHERE id = $1",
            [
                .text(message.endpoint), .text("failing for \(String(format: "%g", hours)) h: \(reason.prefix(120))"),
                .int(now),
            ])
        try AuditLog.append(
            AuditEvent(
                kind: .webhookDisabled, outcome: .failure,
                detail: "endpoint=\(message.endpoint) id=\(message.messageID): \(reason.prefix(120))"),
            at: now, on: db)
    }
}

/// The outcomes of one pass's parallel posts, each slot written by one post.
/// `@unchecked Sendable`: every access holds the lock.
private final class Outcomes: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [Result<Int, DeliveryError>]

    init(count: Int) {
        results = Array(repeating: .failure(DeliveryError(reason: "not sent", retryable: true)), count: count)
    }

    func set(_ i: Int, _ result: Result<Int, DeliveryError>) { lock.withLock { results[i] = result } }
    func get(_ i: Int) -> Result<Int, DeliveryError> { lock.withLock { results[i] } }
}
