import Core
import Foundation
import Messaging
import Metrics
import Store

/// Delivers the outbox: claims due messages with a lease (so two instances
/// never send the same one), hands each to the `MessageSender` outside any
/// transaction, then records the outcome. Failures are retried with
/// exponential backoff; a message that fails for good is marked `failed` and
/// its owner told through `onFailed` (a phone verification moves to its next
/// step). A message claimed by an instance that died is claimed again once
/// its lease runs out.
final class OutboxDispatcher: Sendable {
    /// How long a claimed message is this dispatcher's: 30 s, or longer when
    /// the sender can take longer (two providers' timeouts in a row), with
    /// 15 s to spare for recording the outcome. A lease that ran out during
    /// a slow send would let another instance send the message again.
    let leaseMillis: Int64

    private let transactions: Transactions
    private let clock: Clock
    private let sender: any MessageSender
    /// Dev mode keeps a delivered message's text (the dev outbox shows it).
    private let keepsDelivered: Bool
    /// Tries per message before it is `failed` (the operator's `TRIFACTOR_DELIVERY_ATTEMPTS`, 5 by default).
    private let maxAttempts: Int
    private let onFailed: @Sendable (_ ref: String, _ db: any SQLConnection) throws -> Void

    init(
        transactions: Transactions, clock: Clock, sender: any MessageSender, keepsDelivered: Bool, maxAttempts: Int = 5,
        onFailed: @escaping @Sendable (String, any SQLConnection) throws -> Void
    ) {
        self.transactions = transactions
        self.clock = clock
        self.sender = sender
        self.keepsDelivered = keepsDelivered
        self.maxAttempts = maxAttempts
        self.onFailed = onFailed
        leaseMillis = max(30_000, Int64((sender.longestSend + 15) * 1000))
    }

    /// Delivers what is due now; returns how many messages were handled.
    @discardableResult
    func runOnce() throws -> Int {
        let now = clock.now().millis
        // Most passes find nothing: look without the write lock first.
        let due = try transactions.read { db in
            try db.queryOne(
                """
                SELECT seq FROM outbox WHERE (status = 'pending' AND next_attempt_at <= $1) OR (status = 'sending' AND lease_until < $1) LIMIT 1
                """, [.int(now)]) != nil
        }
        guard due else { return 0 }
        let claimed = try transactions.write { db in
            try db.query(
                """
                UPDATE outbox SET status = 'sending', lease_until = $2
                WHERE seq IN (SELECT seq FROM outbox
                              WHERE (status = 'pending' AND next_attempt_at <= $1) OR (status = 'sending' AND lease_until < $1)
                              ORDER BY seq LIMIT 1)
                  AND ((status = 'pending' AND next_attempt_at <= $1) OR (status = 'sending' AND lease_until < $1))
                RETURNING seq, id, channel, recipient, body, locale, attempts, ref, subject
                """, [.int(now), .int(now + leaseMillis)])
        }
        for row in claimed {
            let seq = try row.int("seq")
            let message = OutgoingMessage(
                id: try row.text("id"), channel: try row.value("channel"),
                to: try row.text("recipient"), text: try row.text("body"), locale: try row.text("locale"),
                subject: try row.optionalText("subject"))
            let attempts = Int(try row.int("attempts")) + 1
            let ref = try row.optionalText("ref")
            let outcome: Result<Delivery, DeliveryError>
            if !sender.channels.contains(message.channel) {
                outcome = .failure(
                    DeliveryError(reason: "no sender for the \(message.channel.rawValue) channel", retryable: false))
            } else {
                do { outcome = .success(try sender.send(message)) } catch { outcome = .failure(error) }
            }
            switch outcome {
            case .success(let delivery):
                ServerMetrics.deliveries.add([message.channel.rawValue, delivery.provider, "sent"])
            case .failure(let error):
                ServerMetrics.deliveries.add([
                    message.channel.rawValue, "", retries(error, attempts: attempts) ? "retry" : "failed",
                ])
            }
            try recordSurely(
                seq: seq, lease: now + leaseMillis, attempts: attempts, ref: ref, outcome: outcome, message: message)
        }
        return claimed.count
    }

    /// Records the outcome of a message already handed to the sender. A write
    /// lost to a passing database outage would leave the message `sending`
    /// until its lease ran out, and then it would go out a second time: so
    /// the write is retried (backing off from 0.2 s to 2 s) while the lease
    /// still has a second to run.
    private func recordSurely(
        seq: Int64, lease: Int64, attempts: Int, ref: String?, outcome: Result<Delivery, DeliveryError>,
        message: OutgoingMessage
    ) throws {
        var pause = 0.2
        while true {
            do {
                return try record(
                    seq: seq, lease: lease, attempts: attempts, ref: ref, outcome: outcome, message: message)
            } catch let error where Self.isPassing(error) && clock.now().millis + Int64(pause * 1000) < lease - 1000 {
                Thread.sleep(forTimeInterval: pause)
                pause = min(pause * 2, 2)
            }
        }
    }

    /// Whether a failed send goes back to pending (else it has failed for good).
    private func retries(_ failure: DeliveryError, attempts: Int) -> Bool {
        failure.retryable && attempts < maxAttempts
    }

    /// A database that is away or busy for now, as opposed to a refused statement.
    static func isPassing(_ error: any Error) -> Bool {
        if let store = error as? StoreError { return store.kind == .unavailable || store.kind == .busy }
        return (error as? CommonFailure) == .unavailable
    }

    /// Records the outcome only while this dispatcher still holds the lease
    /// (another instance may have taken an expired one; a voided message
    /// must not go back to pending).
    private func record(
        seq: Int64, lease: Int64, attempts: Int, ref: String?, outcome: Result<Delivery, DeliveryError>,
        message: OutgoingMessage
    ) throws {
        try transactions.write { db in
            let now = clock.now().millis
            let failure: DeliveryError
            switch outcome {
            case .success(let delivery):
                // Outside dev mode the text (and the code in it) is not kept once delivered.
                let body = keepsDelivered ? message.text : ""
                try db.execute(
                    """
                    UPDATE outbox SET status = 'sent', delivered_at = $2, attempts = $3, body = $4, provider = $6, provider_ref = $7
                    WHERE seq = $1 AND status = 'sending' AND lease_until = $5
                    """,
                    [
                        .int(seq), .int(now), .int(Int64(attempts)), .text(body), .int(lease), .text(delivery.provider),
                        SQLValue(delivery.reference),
                    ])
                return
            case .failure(let error):
                failure = error
            }
            if retries(failure, attempts: attempts) {
                let delay = Int64(min(60, 1 << attempts)) * 1000
                try db.execute(
                    "UPDATE outbox SET status = 'pending', attempts = $2, next_attempt_at = $3, last_error = $4 WHERE seq = $1 AND status = 'sending' AND lease_until = $5",
                    [
                        .int(seq), .int(Int64(attempts)), .int(now + delay), .text(String(failure.reason.prefix(200))),
                        .int(lease),
                    ])
                return
            }
            guard
                try db.execute(
                    "UPDATE outbox SET status = 'failed', attempts = $2, last_error = $3, body = '' WHERE seq = $1 AND status = 'sending' AND lease_until = $4",
                    [.int(seq), .int(Int64(attempts)), .text(String(failure.reason.prefix(200))), .int(lease)]) == 1
            else { return }
            try AuditLog.append(
                AuditEvent(
                    kind: .deliveryFailed, outcome: .failure,
                    detail: "\(message.channel.rawValue) \(ref ?? message.id): \(failure.reason.prefix(120))"),
                at: now, on: db)
            if let ref { try onFailed(ref, db) }
        }
    }

}
