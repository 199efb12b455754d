public import Foundation

/// One message from the outbox, as `GET /dev/outbox` lists it (dev mode only).
public struct OutboxMessage: Codable, Sendable, Equatable {
    public var id: String
    /// `email`, `sms` or `voice`.
    public var channel: String
    public var to: String
    public var text: String
    public var createdAt: Date
    /// `pending`, `sent` or `failed`.
    public var status: String
    public init(id: String, channel: String, to: String, text: String, createdAt: Date, status: String) {
        self.id = id
        self.channel = channel
        self.to = to
        self.text = text
        self.createdAt = createdAt
        self.status = status
    }
    enum CodingKeys: String, CodingKey {
        case id, channel, to, text
        case createdAt = "created_at"
        case status
    }
}

/// `GET /dev/outbox`: newest first.
public struct OutboxListing: Codable, Sendable, Equatable {
    public var messages: [OutboxMessage]
    public init(messages: [OutboxMessage]) { self.messages = messages }
}

/// `GET /health` and `GET /ready`.
public struct HealthStatus: Codable, Sendable, Equatable {
    /// `ok`, or `unavailable` for /ready when the database cannot be reached.
    public var status: String
    /// The server's release (`trifactor doctor` shows it).
    public var version: String?
    public init(status: String, version: String? = nil) {
        self.status = status
        self.version = version
    }
}

/// The release of this build of Trifactor, server and clients alike.
public enum TrifactorVersion {
    public static let current = "0.11.0"
}
