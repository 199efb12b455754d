/// How a message reaches a person, or (`logout`) a relying party: an
/// OpenID Connect back-channel logout token posted to its server.
package enum Channel: String, Sendable, Codable, CaseIterable {
    case sms, voice, email
    case logout = "backchannel_logout"
    /// A CIBA ping (CIBA Core §10.2): a client told that its back-channel request was decided.
    case cibaPing = "ciba_ping"
}

/// A message handed to a sender: an SMS, a voice call that speaks `text`, or an email.
package struct OutgoingMessage: Sendable, Equatable {
    /// The outbox id, stable across retries (providers may use it to drop duplicates).
    package let id: String
    package let channel: Channel
    /// E.164 digits without "+" for sms and voice; an address for email.
    package let to: String
    /// What is written or spoken.
    package let text: String
    /// BCP 47 language tag (`en-us`), for a voice to speak in.
    package let locale: String
    /// An email's subject (nil for texts and calls).
    package let subject: String?

    /// A message.
    package init(
        id: String, channel: Channel, to: String, text: String, locale: String = "en-us", subject: String? = nil
    ) {
        self.id = id
        self.channel = channel
        self.to = to
        self.text = text
        self.locale = locale
        self.subject = subject
    }
}

/// A message a sender accepted: who took it and under which id, so a
/// delivery receipt from that provider can find it later.
package struct Delivery: Sendable, Equatable {
    /// `vonage`, `twilio`, `smtp`, `dev-phone`.
    package let provider: String
    /// The provider's id of the message or call (nil when it gives none).
    package let reference: String?

    /// An accepted message.
    package init(provider: String, reference: String? = nil) {
        self.provider = provider
        self.reference = reference
    }
}

/// Why a delivery failed. `reason` is for logs and the audit trail only: the
/// API caller never sees more than "delivery failed".
package struct DeliveryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What the provider said, without secrets.
    package let reason: String
    /// Whether trying again later may succeed (a timeout or 5xx, not a refused number).
    package let retryable: Bool

    /// A failure.
    package init(reason: String, retryable: Bool) {
        self.reason = reason
        self.retryable = retryable
    }

    package var description: String { reason }
}

/// Delivers messages: the dev phone, SMTP, SMS and voice providers.
/// Called from the outbox dispatcher's thread, never inside a transaction.
package protocol MessageSender: Sendable {
    /// The channels this sender can deliver.
    var channels: Set<Channel> { get }
    /// Delivers one message; returns who accepted it.
    /// - Throws: `DeliveryError` when the message was not accepted.
    func send(_ message: OutgoingMessage) throws(DeliveryError) -> Delivery
    /// The longest one `send` can take, in seconds, timeouts included: the
    /// outbox holds a message's lease longer than this, so a slow send is
    /// never taken for a dead instance's and sent a second time.
    var longestSend: Double { get }
}

extension MessageSender {
    package var longestSend: Double { 1 }
}
