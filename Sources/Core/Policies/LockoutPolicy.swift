package import Foundation

/// Throttling of consecutive failed attempts against one account
/// (NIST SP 800-63B §5.2.2). The failure numbered `freeAttempts` locks the
/// account for `baseDelay`; each further failure doubles that, never longer
/// than `maximumDelay`.
///
/// - Important: An attacker who knows an email can keep its account locked,
///   but never for more than `maximumDelay` after their last try, and the
///   per-address rate limit bounds how often they can try. A success resets
///   the count.
package struct LockoutPolicy: Sendable, Equatable {
    /// The consecutive failure that starts the lockouts (the earlier ones cost nothing).
    package var freeAttempts: Int
    /// Lockout after the first failure past `freeAttempts`.
    package var baseDelay: TimeInterval
    /// Upper bound of any lockout.
    package var maximumDelay: TimeInterval
    /// The consecutive failure that locks for good, until an administrator
    /// clears it (NIST SP 800-63B §5.2.2: no more than 100); nil: never.
    package var ceiling: Int?

    /// Defaults: the 5th failure locks for 5 s, doubling per failure, at most 15 minutes.
    package init(
        freeAttempts: Int = 5, baseDelay: TimeInterval = 5, maximumDelay: TimeInterval = 900, ceiling: Int? = nil
    ) {
        self.freeAttempts = freeAttempts
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
        self.ceiling = ceiling
    }

    /// Whether the `failures`-th consecutive failure locks for good.
    package func freezes(afterFailures failures: Int) -> Bool {
        ceiling.map { failures >= $0 } ?? false
    }

    /// How long to lock after the `failures`-th consecutive failure; nil for no lock.
    package func lockout(afterFailures failures: Int) -> TimeInterval? {
        guard failures >= freeAttempts else { return nil }
        let exponent = min(failures - freeAttempts, 30)
        return min(maximumDelay, baseDelay * pow(2, Double(exponent)))
    }
}
