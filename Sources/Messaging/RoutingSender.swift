/// Several senders as one: each message goes to the sender of its channel
/// (email to SMTP, texts and calls to the dev phone or a provider).
package struct RoutingSender: MessageSender {
    let senders: [any MessageSender]

    /// The first sender that handles a channel wins it.
    package init(_ senders: [any MessageSender]) { self.senders = senders }

    package var channels: Set<Channel> { senders.reduce(into: Set<Channel>()) { $0.formUnion($1.channels) } }

    /// One sender handles each message: the slowest of them.
    package var longestSend: Double { senders.map(\.longestSend).max() ?? 1 }

    package func send(_ message: OutgoingMessage) throws(DeliveryError) -> Delivery {
        guard let sender = senders.first(where: { $0.channels.contains(message.channel) }) else {
            throw DeliveryError(reason: "no sender for \(message.channel.rawValue)", retryable: false)
        }
        return try sender.send(message)
    }
}
