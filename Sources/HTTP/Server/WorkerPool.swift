internal import CThreadShim
import Foundation
import Metrics

/// A fixed set of threads running jobs from a bounded queue: where work that
/// is slow by design (Argon2id) runs, so that it never occupies the HTTP
/// threads. A full queue refuses new jobs instead of growing.
///
/// `@unchecked Sendable`: every mutable field is read and written only while
/// holding `condition`'s lock.
final class WorkerPool: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [(job: @Sendable () -> Void, queuedAt: UInt64)] = []
    private var head = 0
    private var stopping = false
    private var running = 0
    private let capacity: Int
    private let name: String

    /// Seconds jobs waited in the queue before a worker took them, by pool.
    static let waits = Metrics.shared.histogram(
        "trifactor_worker_wait_seconds",
        "Time a job waited for a worker: hashing is Argon2id, database is handlers using the store.",
        labels: ["pool"])

    /// Starts `threads` workers whose nice value is raised by `niceness`
    /// (so they yield the CPU to the HTTP threads), with room for `capacity`
    /// waiting jobs.
    init(name: String, threads: Int, capacity: Int, niceness: Int32) {
        self.capacity = capacity
        self.name = name
        running = threads
        for index in 0..<threads {
            let thread = Thread { [self] in
                // Best effort: a thread that cannot be niced still works.
                _ = trifactor_nice_current_thread(niceness)
                run()
            }
            thread.name = "trifactor-\(name)-\(index)"
            thread.start()
        }
    }

    /// Queues `job`; false when the queue is full or the pool is stopping.
    func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping, jobs.count - head < capacity else { return false }
        jobs.append((job, DispatchTime.now().uptimeNanoseconds))
        condition.signal()
        return true
    }

    /// Jobs queued and not yet taken by a worker.
    var queued: Int {
        condition.lock()
        defer { condition.unlock() }
        return jobs.count - head
    }

    /// Refuses new jobs, lets the workers finish the queue, and returns once
    /// every worker has exited.
    func stopAndWait() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while running > 0 { condition.wait() }
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while head >= jobs.count && !stopping { condition.wait() }
            if head >= jobs.count {  // stopping and drained
                running -= 1
                condition.broadcast()
                condition.unlock()
                return
            }
            let (job, queuedAt) = jobs[head]
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            }
            condition.unlock()
            Self.waits.observe([name], Double(DispatchTime.now().uptimeNanoseconds - queuedAt) / 1e9)
            job()
        }
    }
}
