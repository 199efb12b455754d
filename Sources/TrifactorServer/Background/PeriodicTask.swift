import Foundation
import Logging

/// Background work on a thread of its own, run every `interval` seconds (at
/// once again when a pass says it did something) until `stop()`, which wakes
/// the thread and waits for it to finish its pass. Failures are logged and
/// retried at the next pass. The outbox dispatcher, the phone-verification
/// timer and housekeeping all run this way.
///
/// In `.manual` mode no thread runs: `tick()` runs one pass (tests drive
/// the loops this way, with their own clock, instead of waiting on sleeps).
///
/// `@unchecked Sendable`: `stopping` is read and written only while holding
/// `condition`'s lock.
package final class PeriodicTask: @unchecked Sendable {
    /// How passes run.
    package enum Mode: Sendable {
        /// On a thread of the task's own, every `interval`.
        case threads
        /// Only when `tick()` is called.
        case manual
    }

    private let name: String
    private let interval: TimeInterval
    private let mode: Mode
    private let logger: Logger
    /// One pass; returns true when it did work (run again without waiting).
    private let pass: @Sendable () throws -> Bool
    private let condition = NSCondition()
    private var stopping = false
    private let exited = DispatchSemaphore(value: 0)

    init(
        name: String, interval: TimeInterval, mode: Mode = .threads, logger: Logger,
        pass: @escaping @Sendable () throws -> Bool
    ) {
        self.name = name
        self.interval = interval
        self.mode = mode
        self.logger = logger
        self.pass = pass
    }

    func start() {
        guard mode == .threads else {
            exited.signal()
            return
        }
        let thread = Thread { [self] in
            while true {
                var busy = false
                do {
                    busy = try pass()
                } catch {
                    logger.log(.error, "\(name)_failed", ["error": .string(String(reflecting: error))])
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

    /// Runs passes now until one reports nothing more to do (manual mode's whole work).
    func tick() {
        while true {
            do {
                if try !pass() { return }
            } catch {
                logger.log(.error, "\(name)_failed", ["error": .string(String(reflecting: error))])
                return
            }
        }
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
