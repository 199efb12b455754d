/// Several senders as one: each message goes to the sender of its channel
/// (email to SMTP, texts and calls to the dev phone or a provider).
public struct RoutingSender: MessageSender {
    let senders: [any MessageSender]

    /// The first sender that handles a channel wins it.
    public init(_ senders: [any MessageSender]) { self.senders = senders }

    public var channels: Set<Channel> { senders.reduce(into: Set<Channel>()) { $0.formUnion($1.channels) } }

    /// One sender handles each message: the slowest of them.
    public var longestSend: Double { senders.map(\.longestSend).max() ?? 1 }

    public func send(_ message: OutgoingMessage) throws(DeliveryError) -> Delivery {
        guard let sender = senders.first(where: { $0.channels.contains(message.channel) }) else {
            throw DeliveryError(reason: "no sender for \(message.channel.rawValue)", retryable: false)
        }
        return try sender.send(message)
    }
}
