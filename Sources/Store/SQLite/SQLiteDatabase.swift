internal import CSQLite
import Foundation
import Glibc
import Synchronization

/// A SQLite file database behind a pool of connections (WAL mode, so readers never block the writer).
///
/// Transactions start with `BEGIN IMMEDIATE`: writers queue on the file lock (up to the 5 s busy
/// timeout) instead of failing when a read turns into a write.
final class SQLiteDatabase: Database {
    let dialect = SQLDialect.sqlite
    private let pool: ConnectionPool<SQLiteConnection>
    /// One connection of its own for `ping`, so readiness is known while the pool is busy.
    private let probe: ConnectionPool<SQLiteConnection>
    /// Held for each write transaction of this process (SQLite has one writer at a time anyway).
    private let writer = NSLock()
    /// Copies the WAL back into the database every quarter second, on a connection of its own, so a writer
    /// holding the write lock never waits for that copy's fsync (every 1,000 pages, a committing writer did:
    /// the other writers waited, and the CPU idled). A writer still checkpoints past 10,000 pages, should this
    /// fall behind.
    private let checkpointer: Checkpointer?

    /// Opens the file at `path`, creating it (mode 0600) and its parent
    /// directory (0700) if needed. SQLite gives the `-wal` and `-shm` files
    /// the database file's mode.
    /// - Throws: `.exposedFile` when the file, its `-wal` or its `-shm` can
    ///   be read by group or others, or one of them (or `-journal`) is a hard
    ///   link or not a regular file; `.unavailable` when it cannot be opened.
    /// `readOnly`: an existing file opened for reading alone (`SQLITE_OPEN_READONLY`, no checkpoints, nothing
    /// created), for `trifactord doctor`; its writes fail.
    init(path: String, poolSize: Int, readOnly: Bool = false) throws {
        guard sqlite3_threadsafe() != 0 else {
            throw StoreError(.unavailable, detail: "this SQLite library was built without thread support")
        }
        if readOnly {
            pool = ConnectionPool(capacity: poolSize, timeout: 10) { try SQLiteConnection(path: path, readOnly: true) }
            probe = ConnectionPool(capacity: 1, timeout: 2) { try SQLiteConnection(path: path, readOnly: true) }
            try pool.warmUp()
            checkpointer = nil
            return
        }
        try Self.prepareFiles(at: path)
        pool = ConnectionPool(capacity: poolSize, timeout: 10) {
            try SQLiteConnection(path: path, autoCheckpoint: 10_000)
        }
        probe = ConnectionPool(capacity: 1, timeout: 2) { try SQLiteConnection(path: path) }
        try pool.warmUp()
        let checkpointer = Checkpointer(ConnectionPool(capacity: 1, timeout: 2) { try SQLiteConnection(path: path) })
        checkpointer.schedule()
        self.checkpointer = checkpointer
    }

    /// Creates the directory and the file for their owner alone, and refuses
    /// files that others can read: they hold password hashes, sealed secrets,
    /// phone numbers and pending messages.
    private static func prepareFiles(at path: String) throws {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw StoreError(.unavailable, detail: "cannot create \(directory.path): \(error)")
        }
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd >= 0 {
            Glibc.close(fd)
        } else if errno != EEXIST {
            throw StoreError(.unavailable, detail: "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        // SQLite opens its -wal, -shm and -journal files beside the database and, run as root (a host
        // command with sudo), gives them the database file's owner: a link planted there would hand
        // another file to that owner. SQLite never follows a symbolic link there; a hard link it would.
        // The database itself may be a symbolic link (SQLite resolves it, and its companions sit beside the target).
        let linked = [path, path + "-wal", path + "-shm", path + "-journal"].filter { file in
            var info = stat()
            guard lstat(file, &info) == 0 else { return false }
            if file == path && info.st_mode & S_IFMT == S_IFLNK { return false }
            return info.st_mode & S_IFMT != S_IFREG || info.st_nlink > 1
        }
        guard linked.isEmpty else {
            throw StoreError(
                .exposedFile,
                detail: "\(linked.joined(separator: ", ")) is a link or not a regular file; "
                    + "a database and its -wal, -shm and -journal files must be plain files with one link")
        }
        let exposed = [path, path + "-wal", path + "-shm"].filter { file in
            var info = stat()
            return stat(file, &info) == 0 && info.st_mode & 0o077 != 0
        }
        guard exposed.isEmpty else {
            throw StoreError(
                .exposedFile,
                detail: "\(exposed.joined(separator: ", ")) can be read by group or others; "
                    + "run: chmod 600 \(exposed.joined(separator: " "))")
        }
    }

    @discardableResult func transaction<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        // This process's writers queue here, woken the moment the one before commits; on SQLite's own lock they
        // would poll it, sleeping 1 to 100 ms a try (its busy handler), and leave the CPU idle while the lock
        // is free (27% idle under refresh grants before). Other processes (a host command) still meet the file
        // lock and its busy timeout.
        try pool.withConnection { connection in
            try writer.withLock { try connection.inTransaction(begin: "BEGIN IMMEDIATE", body) }
        }
    }

    /// `BEGIN DEFERRED`: in WAL mode readers share a snapshot and never wait for the write lock.
    func read<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try pool.withConnection { try $0.inTransaction(begin: "BEGIN DEFERRED", body) }
    }

    /// The statement alone, outside `BEGIN`: SQLite runs it as its own transaction.
    func readStatement<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try pool.withConnection { try body(SingleSelect($0)) }
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
        checkpointer?.stop()
        pool.close()
        probe.close()
    }

    deinit { checkpointer?.stop() }

    /// One process owns the file: there is nobody else to tell.
    func notify(channel: String, payload: String) throws {}

    func listen(
        channel: String, onNotification: @escaping @Sendable (String) -> Void,
        onReconnect: @escaping @Sendable () -> Void
    ) -> (any DatabaseListener)? {
        nil
    }
}

/// The WAL copied back into the database on a timer, off the writers' path.
private final class Checkpointer: Sendable {
    private let pool: ConnectionPool<SQLiteConnection>
    private let stopped = Mutex(false)
    private static let queue = DispatchQueue(label: "trifactor.sqlite.checkpoint")

    init(_ pool: ConnectionPool<SQLiteConnection>) { self.pool = pool }

    func schedule() {
        Self.queue.asyncAfter(deadline: .now() + .milliseconds(250)) { [self] in
            guard !stopped.withLock({ $0 }) else { return }
            // PASSIVE: copies what no reader still needs, never waits for a reader or a writer; a busy moment
            // is left for the next tick.
            _ = try? pool.withConnection { try $0.query("PRAGMA wal_checkpoint(PASSIVE)", []) }
            schedule()
        }
    }

    func stop() {
        guard
            !stopped.withLock({
                let was = $0
                $0 = true
                return was
            })
        else { return }
        Self.queue.sync {}  // a checkpoint under way ends before the database closes
        pool.close()
    }
}
