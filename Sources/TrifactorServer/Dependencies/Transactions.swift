import Core
import Logging
import Metrics
import Store

/// The database as the services use it: write and read-only transactions
/// whose store failures (unreachable, busy past its timeout) become
/// `CommonFailure.unavailable`, with the detail logged. Nothing else of the
/// store leaks upwards.
///
/// Inside `request` (a whole handler in one transaction), `write` is a
/// savepoint of that transaction and `read` runs on its connection, so a
/// service behaves as it does alone, and everything commits at the end.
struct Transactions: Sendable {
    let database: any Database
    let logger: Logger

    /// Runs `body` in one write transaction (a savepoint of the request's, inside `request`).
    /// - Throws: what `body` throws, or `CommonFailure.unavailable`.
    func write<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        if let request = RequestTransaction.current { return try unavailableWhenDown { try request.savepoint(body) } }
        return try unavailableWhenDown { try database.transaction(body) }
    }

    /// Runs `body` in one read-only transaction (never the write lock); inside
    /// `request`, in a savepoint of it (so it sees the request's own writes).
    /// - Throws: what `body` throws, or `CommonFailure.unavailable`.
    func read<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        if let request = RequestTransaction.current { return try unavailableWhenDown { try request.savepoint(body) } }
        return try unavailableWhenDown { try database.read(body) }
    }

    /// Runs `body`, which reads with one `SELECT`, as that statement's own transaction (see
    /// `Database.readStatement`: no `BEGIN` and `COMMIT`); inside `request`, in a savepoint of it.
    /// - Throws: what `body` throws, or `CommonFailure.unavailable`.
    func readStatement<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        if let request = RequestTransaction.current { return try unavailableWhenDown { try request.savepoint(body) } }
        return try unavailableWhenDown { try database.readStatement(body) }
    }

    /// Runs `body` (a request's whole handler) in one write transaction that
    /// every `write` and `read` inside it joins; news published meanwhile on
    /// the change feed goes out once it has committed, and is dropped if it
    /// rolls back.
    /// - Important: it holds the write lock (SQLite) and a connection until
    ///   `body` returns: only for short handlers, never around password hashing.
    /// - Throws: what `body` throws, or `CommonFailure.unavailable`.
    func request<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        let (value, committed) = try unavailableWhenDown {
            try database.transaction { db in
                let scope = RequestTransaction(connection: db)
                let value = try RequestTransaction.$current.withValue(scope) { try body(db) }
                return (value, scope.committed)
            }
        }
        for action in committed { action() }
        return value
    }

    private func unavailableWhenDown<T>(_ run: () throws -> T) throws -> T {
        do {
            return try run()
        } catch let error as StoreError where error.kind == .unavailable || error.kind == .busy {
            logger.log(.error, "database_unavailable", ["error": .string(error.debugDescription)])
            ServerMetrics.databaseUnavailable.add()
            throw CommonFailure.unavailable
        }
    }
}

/// The transaction a request's whole handler runs in (see `Transactions.request`).
///
/// - Important: it belongs to the one thread that runs the handler (task-local
///   values bind to that thread outside a task), hence `@unchecked Sendable`.
final class RequestTransaction: @unchecked Sendable {
    @TaskLocal static var current: RequestTransaction?

    private let connection: any SQLConnection
    private var depth = 0
    /// Work to run once the transaction has committed.
    private(set) var committed: [() -> Void] = []
    /// The user an anonymous request turned out to act for (a pending
    /// sign-in's), so that what it keeps (an `Idempotency-Key`'s answer) goes
    /// with their account.
    private(set) var owner: UserID?

    /// Records whom this request acts for (see `owner`).
    func attribute(to user: UserID) { owner = user }

    init(connection: any SQLConnection) { self.connection = connection }

    /// Runs `body` in a savepoint: released when it returns, rolled back to
    /// when it throws, which undoes its writes alone (and drops the work it
    /// left for the commit), as a transaction of its own would.
    func savepoint<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        depth += 1
        defer { depth -= 1 }
        let name = "request_step_\(depth)"
        let pending = committed.count
        try connection.execute("SAVEPOINT \(name)")
        let value: T
        do {
            value = try body(connection)
        } catch {
            committed.removeSubrange(pending...)
            try connection.execute("ROLLBACK TO SAVEPOINT \(name)")
            try connection.execute("RELEASE SAVEPOINT \(name)")
            throw error
        }
        try connection.execute("RELEASE SAVEPOINT \(name)")
        return value
    }

    /// Runs `work` after the commit (never, if the transaction rolls back).
    func whenCommitted(_ work: @escaping () -> Void) { committed.append(work) }
}
