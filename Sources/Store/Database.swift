/// The SQL dialect of a database.
package enum SQLDialect: String, Sendable {
    /// SQLite 3 (file databases, WAL mode).
    case sqlite
    /// PostgreSQL (through libpq).
    case postgres
}

/// A pool of database connections. Open one with `openDatabase(url:poolSize:)`.
package protocol Database: Sendable {
    /// The SQL dialect, for the few statements that differ.
    var dialect: SQLDialect { get }
    /// Runs `body` in one transaction: commits when it returns, rolls back when it throws (and rethrows).
    ///
    /// SQLite uses `BEGIN IMMEDIATE` (so read-then-write never deadlocks); PostgreSQL uses `BEGIN`
    /// (read committed). Blocks while every pooled connection is busy (up to 10 s, then `.unavailable`).
    /// - Important: do not call `transaction` again inside `body`: it would wait for a second connection.
    /// - Throws: what `body` throws, or `StoreError` (`.unavailable` when no connection is free in time).
    @discardableResult func transaction<T>(_ body: (any SQLConnection) throws -> T) throws -> T
    /// Runs `body` in one read-only transaction (a consistent snapshot) that never takes the write
    /// lock: SQLite `BEGIN DEFERRED` (WAL readers run in parallel), PostgreSQL `BEGIN READ ONLY`.
    /// - Important: `body` must not write; PostgreSQL refuses it, and on SQLite a write may fail with `.busy`.
    /// - Throws: what `body` throws, or `StoreError`.
    func read<T>(_ body: (any SQLConnection) throws -> T) throws -> T
    /// Runs `body`, which reads with one `SELECT`, as that statement's own transaction: no
    /// `BEGIN` and `COMMIT` around it (on PostgreSQL, two round trips of the three a `read` of
    /// one statement takes). One statement sees one snapshot and never takes the write lock, as
    /// in `read`. A connection found lost on the statement is replaced and `body` runs again.
    /// - Important: `body` runs at most one statement, a `SELECT`: any other, or a second, throws `.query`.
    /// - Throws: what `body` throws, or `StoreError`.
    func readStatement<T>(_ body: (any SQLConnection) throws -> T) throws -> T
    /// Applies the migrations whose version is above the highest recorded one, in order, each in its
    /// own transaction, and records them in `schema_migrations(version, name, applied_at)`.
    /// Safe when several processes migrate the same database at once.
    /// - Returns: the versions applied by this call.
    /// - Throws: `StoreError` `.migration` when a migration fails or versions repeat.
    @discardableResult func migrate(_ migrations: [Migration]) throws -> [Int]
    /// Versions already applied, ascending (empty on a new database).
    /// - Throws: `StoreError`.
    func appliedMigrations() throws -> [Int]
    /// A cheap round trip (`SELECT 1`) for readiness checks, on a connection
    /// of its own (it does not wait for the pool, nor for a write lock).
    /// - Throws: `StoreError` `.unavailable` when the database cannot be reached.
    func ping() throws
    /// Closes idle connections now and the others as they are returned; later calls fail with `.unavailable`.
    func close()
    /// Tells every process listening on `channel` of this database about
    /// `payload` (PostgreSQL `NOTIFY`, sent at once, outside any transaction).
    /// Does nothing on SQLite, whose database belongs to one process.
    /// - Throws: `StoreError`.
    func notify(channel: String, payload: String) throws
    /// Starts listening on `channel` (PostgreSQL `LISTEN` on a connection and
    /// a thread of their own); nil on SQLite, where there is no other process
    /// to hear from. `onReconnect` runs after a lost connection is back, since
    /// notifications may have been missed.
    /// - Important: `channel` is a fixed identifier of the program, never input.
    func listen(
        channel: String, onNotification: @escaping @Sendable (String) -> Void,
        onReconnect: @escaping @Sendable () -> Void
    ) -> (any DatabaseListener)?
}

/// A running `LISTEN`; stop it before closing the database.
package protocol DatabaseListener: Sendable {
    /// Stops listening and waits for the listening thread to end.
    func stop()
}
