import Foundation
import Logging
import Synchronization

/// A handler's answer "nothing yet": the connection is suspended (no thread
/// is held) until `notify(key)` or a periodic re-check finds something, or
/// until the deadline, when `onTimeout` is sent.
public final class Deferral: Sendable {
    /// What wakes this request: `LongPollHub.notify(key)`.
    public let key: String
    /// Seconds to wait at most.
    public let timeout: TimeInterval
    /// The answer when nothing came in time.
    public let onTimeout: Response

    public init(key: String, timeout: TimeInterval, onTimeout: Response) {
        self.key = key
        self.timeout = timeout
        self.onTimeout = onTimeout
    }
}

/// Long-polling without threads: waiting requests sit here with their
/// connections suspended. `notify` re-runs the handlers waiting on a key at
/// once; every second all of them are re-run anyway (so a change made by
/// another instance is seen too), and expired ones get their timeout answer.
public final class LongPollHub: Sendable {
    struct Waiter: Sendable {
        let id: UInt64
        let key: String
        let deadline: Date
        let request: Request
        let handler: Router.Handler
        let onTimeout: Response
        /// Sends the final answer and resumes the connection.
        let answer: @Sendable (Response) -> Void
    }

    private struct State {
        var waiters: [UInt64: Waiter] = [:]
        /// Waiters whose handler is being re-run right now (never twice at once).
        var running: Set<UInt64> = []
        var woken: Set<String> = []
        var nextID: UInt64 = 0
        var stopping = false
    }

    private let state = Mutex(State())
    private let condition = NSCondition()
    private let started = Atomic<Bool>(false)
    /// Signalled when the hub thread has exited.
    private let exited = DispatchSemaphore(value: 0)
    /// Where re-runs execute (the server's worker pool); set by the server.
    private let runner = Mutex<(@Sendable (@escaping @Sendable () -> Void) -> Bool)?>(nil)

    /// Re-runs go to `run` (returns false when it cannot take the job now).
    func attach(run: @escaping @Sendable (@escaping @Sendable () -> Void) -> Bool) {
        runner.withLock { $0 = run }
    }

    public init() {}

    /// Wakes the requests waiting on `key` now.
    public func notify(_ key: String) {
        state.withLock { _ = $0.woken.insert(key) }
        condition.lock()
        condition.signal()
        condition.unlock()
    }

    func add(key: String, timeout: TimeInterval, request: Request, handler: @escaping Router.Handler, onTimeout: Response,
             answer: @escaping @Sendable (Response) -> Void) {
        let stopping = state.withLock { s -> Bool in
            guard !s.stopping else { return true }
            s.nextID += 1
            s.waiters[s.nextID] = Waiter(id: s.nextID, key: key, deadline: Date().addingTimeInterval(max(0, timeout)), request: request,
                                          handler: handler, onTimeout: onTimeout, answer: answer)
            return false
        }
        if stopping { answer(onTimeout) }
        if !started.exchange(true, ordering: .acquiringAndReleasing) { startThread() }
    }

    /// Answers every waiter with its timeout answer, refuses new ones, and
    /// returns once the hub thread has exited (server stopping), so nothing
    /// touches a connection after libmicrohttpd stops.
    func drain() {
        let all = state.withLock { s -> [Waiter] in
            s.stopping = true
            let all = Array(s.waiters.values)
            s.waiters = [:]
            return all
        }
        for w in all { w.answer(w.onTimeout) }
        notify("")
        if started.load(ordering: .acquiring) { exited.wait() }
    }

    /// Re-runs a waiter's handler; answers if it has something (and nobody answered first).
    private func rerun(_ w: Waiter) {
        let response = (try? w.handler(w.request)) ?? w.onTimeout
        let answer = state.withLock { s -> Bool in
            s.running.remove(w.id)
            guard response.deferral == nil || w.deadline <= Date() else { return false }
            return s.waiters.removeValue(forKey: w.id) != nil
        }
        if answer { w.answer(response.deferral == nil ? response : w.onTimeout) }
    }

    private func startThread() {
        let thread = Thread { [self] in
            var lastSweep = Date.distantPast
            while !state.withLock({ $0.stopping }) {
                condition.lock()
                _ = condition.wait(until: Date().addingTimeInterval(0.25))
                condition.unlock()
                let now = Date()
                let sweep = now.timeIntervalSince(lastSweep) >= 1
                if sweep { lastSweep = now }
                let (expired, due) = state.withLock { s -> ([Waiter], [Waiter]) in
                    let expired = s.waiters.values.filter { $0.deadline <= now }
                    for w in expired { s.waiters[w.id] = nil }
                    let due = s.waiters.values.filter { (sweep || s.woken.contains($0.key)) && !s.running.contains($0.id) }
                    for w in due { s.running.insert(w.id) }
                    s.woken = []
                    return (expired, due)
                }
                for w in expired { w.answer(w.onTimeout) }
                let run = runner.withLock { $0 }
                for w in due {
                    let job: @Sendable () -> Void = { [self] in rerun(w) }
                    // Off this thread, on the worker pool; when it is full, the next sweep retries.
                    if let run, run(job) { continue }
                    state.withLock { _ = $0.running.remove(w.id) }
                }
            }
            exited.signal()
        }
        thread.name = "trifactor-long-poll"
        thread.start()
    }
}
