package import Foundation
import Logging
import Synchronization

/// A handler's answer "nothing yet": the connection is suspended (no thread
/// is held) until `notify(key)` re-runs the handler and it finds something,
/// or until the deadline, when `onTimeout` is sent.
package final class Deferral: Sendable {
    /// What wakes this request: `LongPollHub.notify(key)`.
    package let key: String
    /// Seconds to wait at most.
    package let timeout: TimeInterval
    /// The answer when nothing came in time.
    package let onTimeout: Response

    package init(key: String, timeout: TimeInterval, onTimeout: Response) {
        self.key = key
        self.timeout = timeout
        self.onTimeout = onTimeout
    }
}

/// Long-polling without threads: waiting requests sit here with their
/// connections suspended. `notify(key)` re-runs the handlers waiting on that
/// key at once (on the long-poll executor); nothing else re-runs them, so
/// a thousand waiters cost nothing while nothing changes. A change made by
/// another instance arrives as a `notify` too (PostgreSQL `LISTEN`), and
/// `notifyAll` re-runs everyone when such news may have been missed. At its
/// deadline a waiter gets its timeout answer.
package final class LongPollHub: Sendable {
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
        /// Running waiters woken again meanwhile: they run once more, so no change is missed.
        var dirty: Set<UInt64> = []
        var woken: Set<String> = []
        var wakeAll = false
        var reruns = 0
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

    package init() {}

    /// Wakes the requests waiting on `key` now.
    package func notify(_ key: String) {
        state.withLock { _ = $0.woken.insert(key) }
        wake()
    }

    /// Wakes every waiting request (notifications may have been lost).
    package func notifyAll() {
        state.withLock { $0.wakeAll = true }
        wake()
    }

    /// Requests waiting now.
    package var waiting: Int { state.withLock { $0.waiters.count } }

    /// Handler re-runs so far (each costs a request's work).
    package var reruns: Int { state.withLock { $0.reruns } }

    private func wake() {
        condition.lock()
        condition.signal()
        condition.unlock()
    }

    func add(
        key: String, timeout: TimeInterval, request: Request, handler: @escaping Router.Handler, onTimeout: Response,
        answer: @escaping @Sendable (Response) -> Void
    ) {
        let stopping = state.withLock { s -> Bool in
            guard !s.stopping else { return true }
            s.nextID += 1
            s.waiters[s.nextID] = Waiter(
                id: s.nextID, key: key, deadline: Date().addingTimeInterval(max(0, timeout)), request: request,
                handler: handler, onTimeout: onTimeout, answer: answer)
            return false
        }
        if stopping { answer(onTimeout) }
        if !started.exchange(true, ordering: .acquiringAndReleasing) { startThread() }
        wake()  // the hub thread may be asleep until a later deadline than this one
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

    /// Re-runs a waiter's handler; answers if it has something (and nobody
    /// answered first). Runs again when woken while it ran.
    private func rerun(_ w: Waiter) {
        while true {
            let response = (try? w.handler(w.request)) ?? w.onTimeout
            let (answer, again) = state.withLock { s -> (Bool, Bool) in
                if response.deferral == nil || w.deadline <= Date() {
                    s.running.remove(w.id)
                    s.dirty.remove(w.id)
                    return (s.waiters.removeValue(forKey: w.id) != nil, false)
                }
                if s.dirty.remove(w.id) != nil {
                    s.reruns += 1
                    return (false, true)
                }
                s.running.remove(w.id)
                return (false, false)
            }
            if answer { w.answer(response.deferral == nil ? response : w.onTimeout) }
            if !again { return }
        }
    }

    private func startThread() {
        let thread = Thread { [self] in
            while !state.withLock({ $0.stopping }) {
                // Sleep until the nearest deadline or a notification; never on a fixed beat.
                let next = state.withLock { s in
                    s.woken.isEmpty && !s.wakeAll ? s.waiters.values.map(\.deadline).min() : Date()
                }
                condition.lock()
                _ = condition.wait(until: next ?? Date().addingTimeInterval(60))
                condition.unlock()
                let now = Date()
                let (expired, due) = state.withLock { s -> ([Waiter], [Waiter]) in
                    let expired = s.waiters.values.filter { $0.deadline <= now }
                    for w in expired { s.waiters[w.id] = nil }
                    let woken = s.waiters.values.filter { s.wakeAll || s.woken.contains($0.key) }
                    for w in woken where s.running.contains(w.id) { s.dirty.insert(w.id) }
                    let due = woken.filter { !s.running.contains($0.id) }
                    for w in due { s.running.insert(w.id) }
                    s.reruns += due.count
                    s.woken = []
                    s.wakeAll = false
                    return (expired, due)
                }
                for w in expired { w.answer(w.onTimeout) }
                let run = runner.withLock { $0 }
                for w in due {
                    let job: @Sendable () -> Void = { [self] in rerun(w) }
                    if let run, run(job) { continue }
                    // The executor is full: this waiter runs again at the next notification, or times out.
                    state.withLock { _ = $0.running.remove(w.id) }
                }
            }
            exited.signal()
        }
        thread.name = "trifactor-long-poll"
        thread.start()
    }
}
