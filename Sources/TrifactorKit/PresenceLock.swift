public import Foundation

/// When an app asks for the user's presence again, as banks do: every time;
/// after a session timeout; or after the app spent too long in the
/// background. Each ask is a fresh prompt (`UserPresence.verify`), so
/// "always" really asks every time. Overlapping unlocks share one prompt:
/// the system shows one sheet at a time, and a second one asked for while
/// the first is up fails with a system cancel.
public final class PresenceLock: Sendable {
    /// When to ask again.
    public enum Policy: Sendable, Equatable {
        /// Every `unlock` asks (unlocks made while its prompt is up, for the same reason, share that prompt).
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
        /// The policy the last check passed with.
        var verifiedWith: PresencePolicy?
        /// The prompt on screen, with the policy and reason it asks with.
        var prompt: (task: Task<Void, any Error>, policy: PresencePolicy, reason: String)?
        /// Unlocks waiting for it, and those of them that will take its answer (same policy and reason).
        var waiting = 0
        var sharing = 0
        /// Counts prompts (the one up is the newest) and `lock()`s (a prompt's success counts only in its own epoch).
        var generation = 0
        var epoch = 0
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

    /// Whether the next `unlock` (with the passcode allowed) will prompt.
    public var needsPresence: Bool { needsPresence(for: .biometricsOrPasscode) }

    /// Whether the next `unlock` with `presencePolicy` will prompt: a check that let the passcode in never stands for
    /// one that wants biometrics only.
    public func needsPresence(for presencePolicy: PresencePolicy) -> Bool {
        let now = clock.now
        return state.withLock { s in Self.needs(s, policy, presencePolicy, now) }
    }

    private static func needs(_ s: State, _ policy: Policy, _ wanted: PresencePolicy, _ now: Date) -> Bool {
        if wanted == .biometrics && s.verifiedWith != .biometrics { return true }
        switch policy {
        case .always: return true
        // A clock set back (a negative interval) counts as expired, never as fresh forever.
        case .afterTimeout(let limit):
            return s.lastVerified.map {
                let t = now.timeIntervalSince($0)
                return t >= limit || t < 0
            } ?? true
        case .afterBackground: return s.stale
        }
    }

    /// Passes at once when the policy allows, else asks the user.
    /// - Throws: `LocalAuthenticationError` when the user did not pass.
    /// An unlock made while a prompt is on screen for the same policy and reason waits for it and shares its answer
    /// (the sheet said what it was for); any other waits for it to end and then goes on as if it had come later. The
    /// prompt records its own outcome as it ends, so no unlock ever sees a prompt that ended as still up, and a
    /// `lock()` made while it was up is not undone by its success.
    public func unlock(reason: String, policy presencePolicy: PresencePolicy = .biometricsOrPasscode)
        async throws(LocalAuthenticationError)
    {
        while true {
            let presence = presence
            let clock = clock
            let joined = state.withLock { s -> (task: Task<Void, any Error>, shared: Bool, generation: Int)? in
                if let running = s.prompt {
                    let shared = running.policy == presencePolicy && running.reason == reason
                    s.waiting += 1
                    if shared { s.sharing += 1 }
                    return (running.task, shared, s.generation)
                }
                if !Self.needs(s, policy, presencePolicy, clock.now) { return nil }
                s.generation += 1
                let (generation, epoch) = (s.generation, s.epoch)
                let task = Task<Void, any Error> { [state] in
                    var failure: (any Error)?
                    do { try await presence.verify(reason: reason, policy: presencePolicy) } catch { failure = error }
                    let now = clock.now
                    state.withLock { s in
                        if s.generation == generation { s.prompt = nil }
                        if failure == nil, s.epoch == epoch {
                            s.lastVerified = now
                            s.stale = false
                            s.verifiedWith = presencePolicy
                        }
                    }
                    if let failure { throw failure }
                }
                s.waiting += 1
                s.sharing = 1
                s.prompt = (task, presencePolicy, reason)
                return (task, true, generation)
            }
            guard let joined else { return }
            // A cancelled unlock that was the last to take the prompt's answer takes the prompt with it (a presence
            // that honours cancellation dismisses its sheet); one that others still take the answer of stays up for
            // them. Unlocks that wait behind it for another policy or reason do not keep it up: it is not theirs.
            // A cancelled sharer withdraws at once (not when the prompt ends), so when every sharer is cancelled the
            // last one takes the prompt down; the decision is made under the lock, and the prompt it takes down is
            // no longer offered to unlocks that come after (they ask anew).
            let withdrawn = Locked(false)
            let outcome = await withTaskCancellationHandler {
                await joined.task.result
            } onCancel: { [state] in
                guard joined.shared else { return }
                let takeDown = state.withLock { s -> Bool in
                    guard s.generation == joined.generation, !withdrawn.withLock({ $0 }) else { return false }
                    withdrawn.withLock { $0 = true }
                    s.sharing -= 1
                    guard s.sharing == 0 else { return false }
                    s.prompt = nil
                    return true
                }
                if takeDown { joined.task.cancel() }
            }
            state.withLock { s in
                s.waiting -= 1
                if joined.shared && s.generation == joined.generation && !withdrawn.withLock({ $0 }) { s.sharing -= 1 }
            }
            // A cancelled unlock never reads as passed, even when the sheet it waited for was passed meanwhile.
            if Task.isCancelled { throw .appCancel }
            guard joined.shared else { continue }  // another prompt ended: ask with ours, if still needed
            switch outcome {
            case .success: return
            case .failure(let error as LocalAuthenticationError): throw error
            case .failure: throw Task.isCancelled ? .appCancel : .systemCancel
            }
        }
    }

    /// How many unlocks wait for a prompt now (for tests).
    var unlocksWaiting: Int { state.withLock { $0.waiting } }

    /// Forgets the last check: the next `unlock` asks (sign-out, "lock now"), even if a prompt up now passes.
    public func lock() {
        state.withLock { s in
            var fresh = State()
            (fresh.prompt, fresh.waiting, fresh.sharing, fresh.generation, fresh.epoch) = (
                s.prompt, s.waiting, s.sharing, s.generation, s.epoch + 1
            )
            s = fresh
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
