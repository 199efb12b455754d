import Foundation

/// When an app asks for the user's presence again, as banks do: every time;
/// after a session timeout; or after the app spent too long in the
/// background. Each ask is a fresh prompt (`UserPresence.verify`), so
/// "always" really asks every time. Overlapping unlocks share one prompt:
/// the system shows one sheet at a time, and a second one asked for while
/// the first is up fails with a system cancel.
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
        /// The prompt on screen, and the policy it asks with.
        var prompt: (task: Task<Void, any Error>, policy: PresencePolicy)?
        /// Unlocks waiting for it.
        var waiting = 0
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
    /// An unlock made while another's prompt is on screen waits for that prompt and shares its answer when it asks
    /// with the same policy; one that wanted another policy goes on after it as if it had come later (a passcode
    /// typed for that prompt is never its answer).
    public func unlock(reason: String, policy presencePolicy: PresencePolicy = .biometricsOrPasscode) async throws(LocalAuthenticationError) {
        while true {
            if !needsPresence { return }
            let presence = presence
            let (prompt, shared) = state.withLock { s -> (Task<Void, any Error>, Bool) in
                s.waiting += 1
                if let running = s.prompt { return (running.task, running.policy == presencePolicy) }
                let task = Task<Void, any Error> { try await presence.verify(reason: reason, policy: presencePolicy) }
                s.prompt = (task, presencePolicy)
                return (task, true)
            }
            let outcome = await prompt.result
            state.withLock { s in
                s.waiting -= 1
                // The first to see the prompt end clears it (a newer one may be up already).
                if let running = s.prompt, running.task == prompt { s.prompt = nil }
            }
            guard shared else { continue }  // another policy's prompt ended: ask with ours
            switch outcome {
            case .success:
                let now = clock.now
                state.withLock {
                    $0.lastVerified = now
                    $0.stale = false
                }
                return
            case .failure(let error as LocalAuthenticationError):
                throw error
            case .failure:
                throw .systemCancel
            }
        }
    }

    /// How many unlocks wait for a prompt now (for tests).
    var unlocksWaiting: Int { state.withLock { $0.waiting } }

    /// Forgets the last check: the next `unlock` asks (sign-out, "lock now").
    public func lock() {
        state.withLock { s in
            let (prompt, waiting) = (s.prompt, s.waiting)
            s = State()
            (s.prompt, s.waiting) = (prompt, waiting)
        }
    }

    /// Call when the app goes to the background.
    public func didEnterBackground() {
        let now = clock.now
        state.withLock { $0.backgroundedAt = now }
    }

    /// Call when the app comes back (`sceneWillEnterForeground`): with `.afterBackground(limit)`, a longer absence
    /// makes the next `unlock` ask. Coming back from an absence this lock never saw begin (`didEnterBackground` was not
    /// called) asks too: an app that forgot that call is asked for Face ID more often, never less.
    public func willEnterForeground() {
        let now = clock.now
        state.withLock { s in
            if case .afterBackground(let limit) = policy {
                if let since = s.backgroundedAt {
                    let away = now.timeIntervalSince(since)
                    if away >= limit || away < 0 { s.stale = true }
                } else {
                    s.stale = true
                }
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
