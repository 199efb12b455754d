import Foundation

/// Where domain code reads the time. Domain code never calls `Date()` itself,
/// so tests can pin or move time.
public struct Clock: Sendable {
    /// The current instant.
    public var now: @Sendable () -> Date

    /// A clock that reads `now` from the given closure.
    public init(now: @escaping @Sendable () -> Date) { self.now = now }

    /// The system clock.
    public static let system = Clock { Date() }
}
