import Foundation
import Logging

/// Background work on a thread of its own, run every `interval` seconds (at
/// once again when a pass says it did something) until `stop()`, which wakes
/// the thread and waits for it to finish its pass. Failures are logged and
/// retried at the next pass. The outbox dispatcher, the phone-verification
/// timer and housekeeping all run this way.
///
/// `@unchecked Sendable`: `stopping` is read and written only while holding
/// `condition`'s lock.
final class PeriodicTask: @unchecked Sendable {
    private let name: String
    private let interval: TimeInterval
    private let logger: Logger
    /// One pass; returns true when it did work (run again without waiting).
    private let pass: @Sendable () throws -> Bool
    private let condition = NSCondition()
    private var stopping = false
    private let exited = DispatchSemaphore(value: 0)

    init(name: String, interval: TimeInterval, logger: Logger, pass: @escaping @Sendable () throws -> Bool) {
        self.name = name
        self.interval = interval
        self.logger = logger
        self.pass = pass
    }

    func start() {
        let thread = Thread { [self] in
            while true {
                var busy = false
                do {
                    busy = try pass()
                } catch {
                    logger.log("error", "\(name)_failed", ["error": .string(String(reflecting: error))])
                }
                condition.lock()
                if !busy && !stopping { _ = condition.wait(until: Date().addingTimeInterval(interval)) }
                let done = stopping
                condition.unlock()
                if done { break }
            }
            exited.signal()
        }
        thread.name = "trifactor-\(name)"
        thread.start()
    }

    /// Ends the loop after its current pass and waits for it. Calling it
    /// again returns at once.
    func stop() {
        condition.lock()
        let first = !stopping
        stopping = true
        condition.broadcast()
        condition.unlock()
        if first { exited.wait() }
    }
}
