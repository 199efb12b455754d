import Logging
import Store

/// The database as the services use it: write and read-only transactions
/// whose store failures (unreachable, busy past its timeout) become
/// `CommonFailure.unavailable`, with the detail logged. Nothing else of the
/// store leaks upwards.
struct Transactions: Sendable {
    let database: any Database
    let logger: Logger

    /// Runs `body` in one write transaction.
    /// - Throws: what `body` throws, or `CommonFailure.unavailable`.
    func write<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try unavailableWhenDown { try database.transaction(body) }
    }

    /// Runs `body` in one read-only transaction (never the write lock).
    /// - Throws: what `body` throws, or `CommonFailure.unavailable`.
    func read<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try unavailableWhenDown { try database.read(body) }
    }

    private func unavailableWhenDown<T>(_ run: () throws -> T) throws -> T {
        do {
            return try run()
        } catch let error as StoreError where error.kind == .unavailable || error.kind == .busy {
            logger.log("error", "database_unavailable", ["error": .string(error.debugDescription)])
            ServerMetrics.databaseUnavailable.add()
            throw CommonFailure.unavailable
        }
    }
}
