import Foundation

/// Authenticator assurance level (NIST SP 800-63B §4).
public enum AssuranceLevel: Int, Sendable, Codable, Comparable {
    /// One factor (a password).
    case aal1 = 1
    /// Two distinct factors.
    case aal2 = 2

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// An authentication method reference (RFC 8176 names) recorded on a session.
public enum AuthMethod: String, Sendable, Codable, CaseIterable {
    /// Password.
    case pwd
}

/// Lifetimes of a session: an idle timeout, renewed by use, and an absolute
/// lifetime that nothing renews.
public struct SessionPolicy: Sendable, Equatable {
    /// Longest gap between two uses.
    public var idleTimeout: TimeInterval
    /// Longest life from sign-in.
    public var absoluteLifetime: TimeInterval

    /// Defaults: 30 minutes idle, 12 hours absolute.
    public init(idleTimeout: TimeInterval = 30 * 60, absoluteLifetime: TimeInterval = 12 * 3600) {
        self.idleTimeout = idleTimeout
        self.absoluteLifetime = absoluteLifetime
    }

    /// When a session created at `created` and last used at `lastSeen` ends.
    public func expiry(created: Date, lastSeen: Date) -> Date {
        min(created.addingTimeInterval(absoluteLifetime), lastSeen.addingTimeInterval(idleTimeout))
    }

    /// Whether such a session is over at `now`.
    public func isExpired(created: Date, lastSeen: Date, now: Date) -> Bool {
        now >= expiry(created: created, lastSeen: lastSeen)
    }

    /// Whether a use at `now` should be written back: only once per
    /// 1/30 of the idle timeout (a minute for the default), so that reading a
    /// session is not a write every time. The idle timeout is then exact to
    /// within that slice.
    public func shouldRecordUse(lastSeen: Date, now: Date) -> Bool {
        now.timeIntervalSince(lastSeen) >= idleTimeout / 30
    }
}
