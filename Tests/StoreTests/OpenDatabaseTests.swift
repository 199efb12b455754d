import Foundation
import Glibc
import Store
import Testing
import TrifactorTestSupport

@Suite("openDatabase")
struct OpenDatabaseTests {
    @Test(
        "a URL the store cannot use is rejected as invalidURL",
        arguments: [
            "mysql://root@localhost/db", "", "sqlite:", "sqlite::memory:", "postgres:nonsense-without-equals",
        ])
    func rejectsBadURL(url: String) {
        #expect(storeErrorKind { _ = try openDatabase(url: url) } == .invalidURL)
    }

    @Test("an unreachable PostgreSQL port is unavailable, and the password stays out of the description")
    func unreachablePostgres() {
        do {
            _ = try openDatabase(url: "postgresql://postgres:hunter2@127.0.0.1:1/postgres")
            Issue.record("opened a database on port 1")
        } catch let error as StoreError {
            #expect(error.kind == .unavailable)
            #expect(!error.description.contains("hunter2"))
            #expect(!error.debugDescription.contains("hunter2"))
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test("a SQLite URL creates the file and its parent directories")
    func sqliteCreatesFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-open-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("a/b/c.db").path
        let database = try openDatabase(url: "sqlite://\(path)")
        defer { database.close() }
        try database.ping()
        #expect(database.dialect == .sqlite)
        #expect(FileManager.default.fileExists(atPath: path))
    }

    @Test(
        "a new SQLite database is for its owner alone: directory 0700, the file, its -wal and -shm 0600, whatever the umask"
    )
    func sqliteFileModes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-modes-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("data/t.db").path
        let previous = umask(0o022)
        defer { umask(previous) }
        let database = try openDatabase(url: "sqlite:\(path)")
        try database.transaction { try $0.execute("CREATE TABLE t (x INTEGER)") }
        func mode(_ file: String) throws -> Int {
            try #require(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int)
        }
        #expect(try mode(directory.appendingPathComponent("data").path) == 0o700)
        for file in [path, path + "-wal", path + "-shm"] {
            #expect(try mode(file) == 0o600, "\(file)")
        }
        database.close()
    }

    @Test(
        "a SQLite file, -wal or -shm that group or others can read is refused, naming the chmod to run",
        arguments: ["", "-wal", "-shm"])
    func sqliteExposedFile(suffix: String) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-exposed-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("t.db").path
        let database = try openDatabase(url: "sqlite:\(path)")
        try database.transaction { try $0.execute("CREATE TABLE t (x INTEGER)") }
        chmod(path + suffix, 0o644)
        do {
            _ = try openDatabase(url: "sqlite:\(path)")
            Issue.record("an exposed file was opened")
        } catch let error as StoreError {
            #expect(error.kind == .exposedFile)
            #expect(error.detail.contains("chmod 600 \(path + suffix)"))
        }
        database.close()
    }

    @Test(
        "a SQLite -wal, -shm or -journal planted as a link (which SQLite run as root would chown to the database's owner) is refused",
        arguments: ["-wal", "-shm", "-journal"])
    func sqliteLinkedCompanion(suffix: String) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-linked-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("t.db").path
        let database = try openDatabase(url: "sqlite:\(path)")
        try database.transaction { try $0.execute("CREATE TABLE t (x INTEGER)") }
        database.close()
        let victim = directory.appendingPathComponent("victim").path
        #expect(
            FileManager.default.createFile(
                atPath: victim, contents: Data("x".utf8), attributes: [.posixPermissions: 0o600]))
        for plant in [{ symlink(victim, path + suffix) }, { link(victim, path + suffix) }] {
            unlink(path + suffix)
            #expect(plant() == 0)
            do {
                _ = try openDatabase(url: "sqlite:\(path)")
                Issue.record("a database with a linked \(suffix) was opened")
            } catch let error as StoreError {
                #expect(error.kind == .exposedFile && error.detail.contains(path + suffix), "\(error.detail)")
            }
        }
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "x")
    }

    @Test(
        "run as root, a backup into a folder another user can write is refused before anything is made there",
        .enabled(if: geteuid() == 0))
    func backupFolderOfAnotherUser() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-backup-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("t.db").path
        let database = try openDatabase(url: "sqlite:\(path)")
        try database.transaction { try $0.execute("CREATE TABLE t (x INTEGER)") }
        database.close()
        let theirs = directory.appendingPathComponent("theirs")
        try FileManager.default.createDirectory(
            at: theirs, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        #expect(chown(theirs.path, 65534, 65534) == 0)
        #expect(throws: StoreError.self) {
            try SQLiteBackup.copy(url: "sqlite:\(path)", to: theirs.appendingPathComponent("copy.db").path)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: theirs.path) == [])
        // Root's own folder is fine.
        #expect(
            try SQLiteBackup.copy(url: "sqlite:\(path)", to: directory.appendingPathComponent("copy.db").path).pages > 0
        )
    }

    @Test("a copy killed mid-way leaves a folder that the next copy sweeps after a day, and a fresh one it keeps")
    func abandonedCopyFoldersAreSwept() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-sweep-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("t.db").path
        let database = try openDatabase(url: "sqlite:\(path)")
        try database.transaction { try $0.execute("CREATE TABLE t (x INTEGER)") }
        database.close()
        // What a killed copy leaves: its folder with a partial copy in it. One a day old, one made just now.
        let stale = directory.appendingPathComponent(".trifactor-backup-STALE1").path
        let fresh = directory.appendingPathComponent(".trifactor-backup-FRESH1").path
        for folder in [stale, fresh] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
            #expect(FileManager.default.createFile(atPath: folder + "/copy.db", contents: Data("partial".utf8)))
        }
        var old = [timespec(tv_sec: time(nil) - 90_000, tv_nsec: 0), timespec(tv_sec: time(nil) - 90_000, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, stale, &old, 0) == 0)
        _ = try SQLiteBackup.copy(url: "sqlite:\(path)", to: directory.appendingPathComponent("copy.db").path)
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(!left.contains(".trifactor-backup-STALE1"), "\(left)")
        #expect(left.contains(".trifactor-backup-FRESH1") && left.contains("copy.db"), "\(left)")
    }

    @Test(
        "the PostgreSQL cases run (TRIFACTOR_TEST_POSTGRES_URL is set)",
        .enabled(
            if: Backend.postgresURL != nil || Backend.isCI,
            "PostgreSQL cases SKIPPED: run under scripts/with-postgres.sh to test the PostgreSQL backend"))
    func postgresIsUnderTest() {
        #expect(
            Backend.postgresURL != nil, "CI is set but TRIFACTOR_TEST_POSTGRES_URL is not: PostgreSQL went untested")
    }
}
