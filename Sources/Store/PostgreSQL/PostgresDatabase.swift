internal import CPostgres

/// A PostgreSQL database behind a pool of blocking libpq connections.
///
/// Transactions use `BEGIN` (read committed); a connection that fails is dropped and replaced.
final class PostgresDatabase: Database {
    let dialect = SQLDialect.postgres
    private let pool: ConnectionPool<PostgresConnection>
    /// One connection of its own for `ping`, so readiness is known while the pool is busy.
    private let probe: ConnectionPool<PostgresConnection>
    private let poolSize: Int
    private let conninfo: String

    /// Connects to `conninfo` and keeps up to `poolSize` connections.
    init(conninfo: String, poolSize: Int) throws {
        self.poolSize = poolSize
        self.conninfo = conninfo
        pool = ConnectionPool(capacity: poolSize, timeout: 10) { try PostgresConnection(conninfo: conninfo) }
        probe = ConnectionPool(capacity: 1, timeout: 2) { try PostgresConnection(conninfo: conninfo) }
        try pool.warmUp()
    }

    @discardableResult func transaction<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try run(begin: "BEGIN", body)
    }

    func read<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try run(begin: "BEGIN READ ONLY", body)
    }

    /// The statement alone, outside `BEGIN`: PostgreSQL runs it as its own transaction. A
    /// connection that turns out lost on it is replaced, and the read tried again.
    func readStatement<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try retryingStale {
            try pool.withConnection { connection in
                do {
                    return try body(SingleSelect(connection))
                } catch let error as StoreError where error.kind == .unavailable && connection.isBroken {
                    throw StaleConnection(error: error)  // a read: running it again changes nothing
                }
            }
        }
    }

    private func run<T>(begin: String, _ body: (any SQLConnection) throws -> T) throws -> T {
        try retryingStale { try pool.withConnection { try $0.inTransaction(begin: begin, body) } }
    }

    private func retryingStale<T>(_ attempt: () throws -> T) throws -> T {
        // Pooled connections may all have died (server restart): each is dropped on its failed BEGIN,
        // and the last attempt gets a freshly opened one.
        var attempts = poolSize + 1
        while true {
            do {
                return try attempt()
            } catch let stale as StaleConnection {
                attempts -= 1
                if attempts == 0 { throw stale.error }
            }
        }
    }

    func migrate(_ migrations: [Migration]) throws -> [Int] {
        try MigrationRunner.migrate(migrations, on: self)
    }

    func appliedMigrations() throws -> [Int] {
        try MigrationRunner.appliedMigrations(on: self)
    }

    func ping() throws {
        _ = try probe.withConnection { try $0.query("SELECT 1", []) }
    }

    func close() {
        pool.close()
        probe.close()
    }

    func notify(channel: String, payload: String) throws {
        _ = try pool.withConnection { try $0.query("SELECT pg_notify($1, $2)", [.text(channel), .text(payload)]) }
    }

    func listen(
        channel: String, onNotification: @escaping @Sendable (String) -> Void,
        onReconnect: @escaping @Sendable () -> Void
    ) -> (any DatabaseListener)? {
        PostgresListener(conninfo: conninfo, channel: channel, onNotification: onNotification, onReconnect: onReconnect)
    }

    /// Checks that libpq understands `conninfo` (URL or keyword string), without connecting.
    static func validate(_ conninfo: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let options = PQconninfoParse(conninfo, &message)
        defer {
            PQconninfoFree(options)
            if let message { PQfreemem(message) }
        }
        guard options != nil else {
            // libpq's message may quote the string (and its password): keep only a fixed sentence.
            throw StoreError(.invalidURL, detail: "libpq cannot parse the PostgreSQL connection string")
        }
    }
}
