/// The demo's phone and inbox: a message is delivered by writing it to the
/// log, and the outbox row it came from stays readable at `/dev/outbox` and
/// `/dev/phone`. Dev mode only.
package struct DevPhoneSender: MessageSender {
    private let log: @Sendable (OutgoingMessage) -> Void

    /// A sender that hands each message to `log`.
    package init(log: @escaping @Sendable (OutgoingMessage) -> Void) { self.log = log }

    package var channels: Set<Channel> { Set(Channel.allCases) }

    package func send(_ message: OutgoingMessage) throws(DeliveryError) -> Delivery {
        log(message)
        return Delivery(provider: "dev-phone")
    }
}
