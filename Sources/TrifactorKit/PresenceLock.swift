import Foundation

/// When an app asks for the user's presence again, as banks do: every time;
/// after a session timeout; or after the app spent too long in the
/// background. Each ask is a fresh prompt (`UserPresence.verify`), so
/// "always" really asks every time.
public final class PresenceLock: Sendable {
    /// When to ask again.
    public enum Policy: Sendable, Equatable {
        /// Every `unlock` asks.
        case always
        /// Asks when the last successful check is older than this many seconds.
        case afterTimeout(TimeInterval)
        /// Asks when the app was in the background longer than this many seconds (300 is what banks use), and at first use.
        case afterBackground(TimeInterval)
    }

    private struct State {
        var lastVerified: Date?
        var backgroundedAt: Date?
        var stale = true
    }

    public let policy: Policy
    private let presence: any UserPresence
    private let clock: any TrifactorClock
    private let state = Locked(State())

    public init(policy: Policy, presence: any UserPresence, clock: any TrifactorClock = SystemClock()) {
        self.policy = policy
        self.presence = presence
        self.clock = clock
    }

    /// Whether the next `unlock` will prompt.
    public var needsPresence: Bool {
        let now = clock.now
        return state.withLock { s in
            switch policy {
            case .always: return true
            // A clock set back (a negative interval) counts as expired, never as fresh forever.
            case .afterTimeout(let limit): return s.lastVerified.map { let t = now.timeIntervalSince($0); return t >= limit || t < 0 } ?? true
            case .afterBackground: return s.stale
            }
        }
    }

    /// Passes at once when the policy allows, else asks the user.
    /// - Throws: `LocalAuthenticationError` when the user did not pass.
    public func unlock(reason: String, policy presencePolicy: PresencePolicy = .biometricsOrPasscode) async throws(LocalAuthenticationError) {
        if !needsPresence { return }
        try await presence.verify(reason: reason, policy: presencePolicy)
        let now = clock.now
        state.withLock {
            $0.lastVerified = now
            $0.stale = false
        }
    }

    /// Forgets the last check: the next `unlock` asks (sign-out, "lock now").
    public func lock() { state.withLock { $0 = State() } }

    /// Call when the app goes to the background.
    public func didEnterBackground() {
        let now = clock.now
        state.withLock { $0.backgroundedAt = now }
    }

    /// Call when the app comes back: with `.afterBackground(limit)`, a longer absence makes the next `unlock` ask.
    public func willEnterForeground() {
        let now = clock.now
        state.withLock { s in
            if case .afterBackground(let limit) = policy, let since = s.backgroundedAt {
                let away = now.timeIntervalSince(since)
                if away >= limit || away < 0 { s.stale = true }
            }
            s.backgroundedAt = nil
        }
    }
}

/// A value behind a lock. `@unchecked Sendable`: every access holds `lock`.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
