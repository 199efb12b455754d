package import Foundation

/// Where domain code reads the time. Domain code never calls `Date()` itself,
/// so tests can pin or move time.
package struct Clock: Sendable {
    /// The current instant.
    package var now: @Sendable () -> Date

    /// A clock that reads `now` from the given closure.
    package init(now: @escaping @Sendable () -> Date) { self.now = now }

    /// The system clock.
    package static let system = Clock { Date() }
}
