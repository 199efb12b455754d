/// Several provider accounts in the operator's order: a message goes to the
/// first that handles its channel; when that one refuses it or is down, to
/// the next, once each. The failure that remains is worth retrying later if
/// any provider's was (the outbox does that); otherwise it is final.
package struct FailoverSender: MessageSender {
    let senders: [any MessageSender]
    /// Told of each failover (the provider that failed and why), for the log.
    let onFailover: @Sendable (_ failed: DeliveryError, _ message: OutgoingMessage) -> Void

    package init(
        _ senders: [any MessageSender],
        onFailover: @escaping @Sendable (DeliveryError, OutgoingMessage) -> Void = { _, _ in }
    ) {
        self.senders = senders
        self.onFailover = onFailover
    }

    package var channels: Set<Channel> { senders.reduce(into: Set<Channel>()) { $0.formUnion($1.channels) } }

    /// A message may be tried on each account in turn: their times add up.
    package var longestSend: Double { senders.reduce(0) { $0 + $1.longestSend } }

    package func send(_ message: OutgoingMessage) throws(DeliveryError) -> Delivery {
        let candidates = senders.filter { $0.channels.contains(message.channel) }
        var failures: [DeliveryError] = []
        for (index, sender) in candidates.enumerated() {
            do {
                return try sender.send(message)
            } catch {
                failures.append(error)
                if index < candidates.count - 1 { onFailover(error, message) }
            }
        }
        guard !failures.isEmpty else {
            throw DeliveryError(reason: "no provider for \(message.channel.rawValue)", retryable: false)
        }
        throw DeliveryError(
            reason: failures.map(\.reason).joined(separator: "; "), retryable: failures.contains(where: \.retryable))
    }
}
