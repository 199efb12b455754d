internal import CSQLite
import Foundation
import Glibc

/// A consistent copy of a live SQLite database, made with SQLite's online
/// backup API while the server goes on serving: pages are copied in steps,
/// and a write by the server between steps makes the copy restart from a
/// fresh snapshot, so the result is always one committed state. The copy is
/// written next to `destination`, checked with `PRAGMA integrity_check`,
/// and only then renamed into place; an existing file is never overwritten.
package enum SQLiteBackup {
    /// What a finished backup copied.
    package struct Report: Sendable {
        package let pages: Int
        package let bytes: Int
    }

    /// The file of a `sqlite:` URL, or nil for another URL.
    package static func path(of url: String) -> String? {
        guard url.lowercased().hasPrefix("sqlite:") else { return nil }
        var path = String(url.dropFirst("sqlite:".count))
        if path.hasPrefix("//") { path.removeFirst(2) }
        return path
    }

    /// Copies the database of `url` (a `sqlite:` URL) to `destination`.
    /// - Throws: `StoreError` `.invalidURL` for a URL that is not SQLite's,
    ///   a destination that exists, or (run as root) a destination folder
    ///   another user can write; `.unavailable` when either file cannot
    ///   be opened or the copy fails its integrity check.
    package static func copy(url: String, to destination: String) throws -> Report {
        guard url.lowercased().hasPrefix("sqlite:") else {
            throw StoreError(
                .invalidURL,
                detail:
                    "backup copies SQLite databases; back up PostgreSQL with pg_dump or a base backup (see docs/operations/backups.md)"
            )
        }
        var source = String(url.dropFirst("sqlite:".count))
        if source.hasPrefix("//") { source.removeFirst(2) }
        guard FileManager.default.fileExists(atPath: source) else {
            throw StoreError(.unavailable, detail: "there is no database at \(source)")
        }
        guard !FileManager.default.fileExists(atPath: destination) else {
            throw StoreError(.invalidURL, detail: "\(destination) already exists: a backup never overwrites a file")
        }
        // The copy is made in a new folder of its own beside the destination (mkdtemp: a random name,
        // mode 0700, this user's), so nobody else can plant a link at the copy or at the -journal,
        // -wal and -shm files SQLite makes beside it, even when the command runs as root in a folder
        // the service account can write; the copy holds what the database holds (password hashes,
        // sealed secrets): owner-only from its first byte.
        let parent = URL(fileURLWithPath: destination).deletingLastPathComponent().path
        // Run as root, whoever else can write the folder could swap the copy's folder for a link between
        // mkdtemp and the copy: refuse such a folder (the service account's own data folder, say).
        var folderInfo = stat()
        if geteuid() == 0, stat(parent, &folderInfo) == 0, folderInfo.st_uid != 0 || folderInfo.st_mode & 0o022 != 0 {
            throw StoreError(
                .invalidURL,
                detail:
                    "\(parent) can be written by another user than root: as root, back up into a folder only root can write "
                    + "(or run the backup as the folder's owner)")
        }
        sweepAbandoned(in: parent)
        var template = Array((parent + "/.trifactor-backup-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw StoreError(
                .unavailable,
                detail: "cannot make a folder for the copy beside \(destination): \(String(cString: strerror(errno)))")
        }
        let folder = String(cString: made)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let partial = folder + "/copy.db"
        let fd = Glibc.open(partial, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StoreError(.unavailable, detail: "cannot create \(partial): \(String(cString: strerror(errno)))")
        }
        close(fd)
        let from = try open(source, flags: SQLITE_OPEN_READONLY)
        defer { sqlite3_close_v2(from) }
        let to = try open(partial, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        var closed = false
        defer { if !closed { sqlite3_close_v2(to) } }
        sqlite3_busy_timeout(from, 5000)
        guard let backup = sqlite3_backup_init(to, "main", from, "main") else {
            throw StoreError(.unavailable, detail: "sqlite3_backup_init failed: \(String(cString: sqlite3_errmsg(to)))")
        }
        // All pages in one step: one read transaction, one snapshot. In WAL mode it never blocks the
        // server's writers, and their writes cannot restart it (copying in slices would restart on
        // every write and might never finish on a busy server). Busy or locked only means: wait a little.
        var rc: Int32
        var tries = 0
        repeat {
            rc = sqlite3_backup_step(backup, -1)
            tries += 1
            if rc == SQLITE_BUSY || rc == SQLITE_LOCKED { usleep(50_000) }
        } while (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) && tries < 200
        let pages = Int(sqlite3_backup_pagecount(backup))
        sqlite3_backup_finish(backup)
        guard rc == SQLITE_DONE else {
            throw StoreError(.unavailable, detail: "the backup stopped: \(String(cString: sqlite3_errstr(rc)))")
        }
        // A single-file copy: the journal mode of the live database (WAL) is kept, its -wal file is not needed.
        guard try integrity(to) == "ok" else {
            throw StoreError(.unavailable, detail: "the copy failed its integrity check; nothing was written")
        }
        sqlite3_close_v2(to)
        closed = true
        // link() refuses an existing destination, even one that appeared during the copy (rename would replace it).
        guard link(partial, destination) == 0 else {
            let reason =
                errno == EEXIST
                ? "\(destination) already exists: a backup never overwrites a file" : String(cString: strerror(errno))
            throw StoreError(
                errno == EEXIST ? .invalidURL : .unavailable,
                detail: "could not put the copy at \(destination): \(reason)")
        }
        let bytes = (try? FileManager.default.attributesOfItem(atPath: destination)[.size] as? Int) ?? 0
        return Report(pages: pages, bytes: bytes)
    }

    /// Removes the folders of copies that never finished (the process was killed mid-copy, so its `defer` never
    /// ran): this user's `.trifactor-backup-*` folders beside the destination, untouched for a day (a copy in
    /// progress touches its folder as it writes), and only the files a copy makes in them.
    static func sweepAbandoned(in parent: String, olderThan age: TimeInterval = 86_400) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: parent) else { return }
        for name in names where name.hasPrefix(".trifactor-backup-") {
            let folder = parent + "/" + name
            var info = stat()
            guard lstat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == geteuid(),
                Double(info.st_mtim.tv_sec) < Date().timeIntervalSince1970 - age
            else { continue }
            for file in ["copy.db", "copy.db-journal", "copy.db-wal", "copy.db-shm"] { unlink(folder + "/" + file) }
            rmdir(folder)
        }
    }

    private static func open(_ path: String, flags: Int32) throws -> OpaquePointer {
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            sqlite3_close_v2(db)
            throw StoreError(.unavailable, detail: "cannot open \(path): \(String(cString: sqlite3_errstr(rc)))")
        }
        return db
    }

    private static func integrity(_ db: OpaquePointer) throws -> String {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &statement, nil) == SQLITE_OK, let statement else {
            throw StoreError(.unavailable, detail: "cannot check the copy: \(String(cString: sqlite3_errmsg(db)))")
        }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0) else {
            return "no answer"
        }
        return String(cString: text)
    }
}
