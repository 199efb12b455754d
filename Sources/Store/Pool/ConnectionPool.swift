import Foundation
import Metrics
import Synchronization

/// The pools' measurements for `/metrics`.
enum PoolMetrics {
    /// Seconds callers waited for a connection (a pool too small or a database too slow shows here).
    static let waits = Metrics.shared.histogram(
        "trifactor_database_pool_wait_seconds", "Time spent waiting for a pooled database connection.")
    /// Callers that found no connection in time, or whose new connection failed.
    static let failures = Metrics.shared.counter(
        "trifactor_database_pool_errors_total",
        "Database connections that could not be had: the pool's timeout ran out, or connecting failed.",
        labels: ["reason"])
}

/// A check run before any connection is taken from any pool, so a caller
/// can forbid database work where it must never happen (the server forbids
/// it on its HTTP threads in debug builds).
package enum DatabaseAccess {
    private static let check = Mutex<(@Sendable () -> Void)?>(nil)

    /// Runs `check` before every connection is taken from now on.
    package static func onAcquire(_ check: (@Sendable () -> Void)?) {
        self.check.withLock { $0 = check }
    }

    static func checkAcquire() {
        check.withLock { $0 }?()
    }
}

/// A blocking pool of at most `capacity` connections, created lazily by `factory`.
///
/// A thread that finds every connection in use waits on a condition variable, up to `timeout`,
/// then fails with `.unavailable`. Broken connections are dropped on release and replaced on demand.
///
/// `@unchecked Sendable`: every mutable property is read and written only while `condition` is
/// locked, and a connection handed to `withConnection`'s body is used by that one thread alone
/// until it is returned. Connections free their C handles in `deinit`, so dropping one closes it.
final class ConnectionPool<Connection: BackendConnection>: @unchecked Sendable {
    private let condition = NSCondition()
    private var idle: [Connection] = []
    private var open = 0
    private var closed = false
    private let capacity: Int
    private let timeout: TimeInterval
    private let factory: @Sendable () throws -> Connection

    /// A pool of up to `capacity` connections; waits for a free one at most `timeout` seconds.
    init(capacity: Int, timeout: TimeInterval, factory: @escaping @Sendable () throws -> Connection) {
        self.capacity = max(1, capacity)
        self.timeout = timeout
        self.factory = factory
    }

    /// Opens one connection now, so a database that cannot be reached fails at open.
    func warmUp() throws {
        try withConnection { _ in }
    }

    /// Runs `body` with a connection of its own, then returns the connection to the pool.
    func withConnection<T>(_ body: (Connection) throws -> T) throws -> T {
        let connection = try acquire()
        defer { release(connection) }
        return try body(connection)
    }

    /// Drops idle connections now and the others when they are released.
    func close() {
        condition.lock()
        closed = true
        let dropped = idle
        idle.removeAll()
        open -= dropped.count
        condition.broadcast()
        condition.unlock()
        _ = dropped  // released here, outside the lock: deinit closes the C handles
    }

    /// A connection: an idle one, a new one while under capacity, or the
    /// next one released within `timeout`; its wait is measured, and a
    /// failure counted by its reason (`timeout` or `connect`).
    private func acquire() throws -> Connection {
        DatabaseAccess.checkAcquire()
        let started = DispatchTime.now().uptimeNanoseconds
        func acquired(_ connection: Connection) -> Connection {
            PoolMetrics.waits.observe(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
            return connection
        }
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        while true {
            if closed {
                condition.unlock()
                throw StoreError(.unavailable, detail: "the database has been closed")
            }
            if let connection = idle.popLast() {
                condition.unlock()
                return acquired(connection)
            }
            if open < capacity {
                open += 1
                condition.unlock()
                do {
                    return acquired(try factory())
                } catch {
                    condition.lock()
                    open -= 1
                    condition.signal()
                    condition.unlock()
                    PoolMetrics.failures.add(["connect"])
                    throw error
                }
            }
            if !condition.wait(until: deadline) {
                condition.unlock()
                PoolMetrics.failures.add(["timeout"])
                throw StoreError(.unavailable, detail: "no database connection became free within \(timeout) s")
            }
        }
    }

    private func release(_ connection: Connection) {
        let keep = !connection.isBroken
        condition.lock()
        if keep && !closed {
            idle.append(connection)
        } else {
            open -= 1
        }
        condition.signal()
        condition.unlock()
    }
}
