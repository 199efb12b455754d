internal import CSQLite
import Foundation

/// A SQLite file database behind a pool of connections (WAL mode, so readers never block the writer).
///
/// Transactions start with `BEGIN IMMEDIATE`: writers queue on the file lock (up to the 5 s busy
/// timeout) instead of failing when a read turns into a write.
final class SQLiteDatabase: Database {
    let dialect = SQLDialect.sqlite
    private let pool: ConnectionPool<SQLiteConnection>

    /// Opens the file at `path`, creating it and its parent directory if needed.
    init(path: String, poolSize: Int) throws {
        guard sqlite3_threadsafe() != 0 else {
            throw StoreError(.unavailable, detail: "this SQLite library was built without thread support")
        }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw StoreError(.unavailable, detail: "cannot create \(directory.path): \(error)")
        }
        pool = ConnectionPool(capacity: poolSize, timeout: 10) { try SQLiteConnection(path: path) }
        try pool.warmUp()
    }

    @discardableResult func transaction<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try pool.withConnection { try $0.inTransaction(begin: "BEGIN IMMEDIATE", body) }
    }

    /// `BEGIN DEFERRED`: in WAL mode readers share a snapshot and never wait for the write lock.
    func read<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try pool.withConnection { try $0.inTransaction(begin: "BEGIN DEFERRED", body) }
    }

    func migrate(_ migrations: [Migration]) throws -> [Int] {
        try MigrationRunner.migrate(migrations, on: self)
    }

    func appliedMigrations() throws -> [Int] {
        try MigrationRunner.appliedMigrations(on: self)
    }

    func ping() throws {
        _ = try pool.withConnection { try $0.query("SELECT 1", []) }
    }

    func close() {
        pool.close()
    }
}
