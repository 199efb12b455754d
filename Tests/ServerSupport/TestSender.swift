package import Messaging
import Synchronization

/// A message sender for tests: records what it was given, and fails on
/// demand (a provider outage), behind the protocol the real ones implement.
package final class TestSender: MessageSender {
    private let state = Mutex<(sent: [OutgoingMessage], failure: DeliveryError?)>(([], nil))

    package init() {}

    package var channels: Set<Channel> { Set(Channel.allCases) }

    package func send(_ message: OutgoingMessage) throws(DeliveryError) -> Delivery {
        let failure = state.withLock { s -> DeliveryError? in
            if s.failure == nil { s.sent.append(message) }
            return s.failure
        }
        if let failure { throw failure }
        return Delivery(provider: "test", reference: message.id)
    }

    /// Messages delivered so far, oldest first.
    package var sent: [OutgoingMessage] { state.withLock { $0.sent } }

    /// Makes every later delivery fail with `failure` (nil: succeed again).
    package func fail(with failure: DeliveryError?) { state.withLock { $0.failure = failure } }
}
