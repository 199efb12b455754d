internal import CSQLite
internal import CSQLiteShim
import Foundation

/// One SQLite connection with its cache of prepared statements.
///
/// Opened with `SQLITE_OPEN_NOMUTEX` (multi-thread mode): the pool gives a connection to one
/// thread at a time, so SQLite's own per-connection mutex would be wasted work.
final class SQLiteConnection: BackendConnection {
    /// A prepared statement and, for each of its parameters (1-based SQLite index), the `$N` it stands for.
    private struct Prepared {
        let statement: OpaquePointer
        let placeholders: [Int]
    }

    private static let cacheLimit = 256
    private static let uniqueViolationCodes: Set<Int32> = [2067, 1555]  // SQLITE_CONSTRAINT_UNIQUE, _PRIMARYKEY
    private let handle: OpaquePointer
    private var cache: [String: Prepared] = [:]

    /// Opens (creating if needed) the database file at `path` and applies the connection pragmas.
    /// `autoCheckpoint`: the WAL's size in pages at which a committing writer checkpoints it (SQLite's
    /// default, 1,000, when nil).
    /// `readOnly`: opens an existing file for reading alone, changing nothing (no journal mode, no checkpoints):
    /// for `trifactord doctor`.
    init(path: String, autoCheckpoint: Int? = nil, readOnly: Bool = false) throws {
        var db: OpaquePointer?
        let flags =
            readOnly
            ? SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX
            : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_close_v2(db)
            throw StoreError(.unavailable, detail: "sqlite3_open_v2 failed (\(rc)): \(message)")
        }
        handle = db
        // On failure below, deinit closes the handle.
        guard sqlite3_busy_timeout(handle, 5000) == SQLITE_OK else { throw error(sql: "busy_timeout") }
        if readOnly { return }
        let mode = try query("PRAGMA journal_mode=WAL", []).first?["journal_mode"]
        guard mode == .text("wal") else {
            throw StoreError(.unavailable, detail: "SQLite refused WAL mode (got \(mode ?? .null))")
        }
        try executeScript("PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL")
        if let autoCheckpoint { try executeScript("PRAGMA wal_autocheckpoint=\(autoCheckpoint)") }
    }

    deinit {
        for prepared in cache.values { sqlite3_finalize(prepared.statement) }
        sqlite3_close_v2(handle)
    }

    var isBroken: Bool { sqlite3_get_autocommit(handle) == 0 }

    func execute(_ sql: String, _ parameters: [SQLValue]) throws -> Int {
        try run(sql, parameters) { _ in }
        return Int(sqlite3_changes64(handle))
    }

    func query(_ sql: String, _ parameters: [SQLValue]) throws -> [Row] {
        var rows: [Row] = []
        var columns: [String] = []
        try run(sql, parameters) { statement in
            let count = sqlite3_column_count(statement)
            if columns.isEmpty {
                columns = (0..<count).map { String(cString: sqlite3_column_name(statement, $0)).lowercased() }
            }
            rows.append(Row(lowercasedColumns: columns, values: (0..<count).map { value(statement, $0) }))
        }
        return rows
    }

    func executeScript(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &message)
        let text = message.map { String(cString: $0) }
        sqlite3_free(message)
        guard rc == SQLITE_OK else { throw error(sql: sql, message: text) }
    }

    func inTransaction<T>(begin: String, _ body: (any SQLConnection) throws -> T) throws -> T {
        try executeScript(begin)
        do {
            let result = try body(self)
            try executeScript("COMMIT")
            return result
        } catch {
            if sqlite3_get_autocommit(handle) == 0 {
                _ = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)  // if it fails, isBroken drops the connection
            }
            throw error
        }
    }

    /// Binds `parameters`, steps to the end calling `onRow` for each row, and resets the statement.
    private func run(_ sql: String, _ parameters: [SQLValue], onRow: (OpaquePointer) throws -> Void) throws {
        let prepared = try statement(for: sql)
        let statement = prepared.statement
        defer { sqlite3_reset(statement) }
        for (index, placeholder) in prepared.placeholders.enumerated() {
            guard placeholder <= parameters.count else {
                throw StoreError(
                    .query, detail: "$\(placeholder) used but only \(parameters.count) parameters given", sql: sql)
            }
            try bind(parameters[placeholder - 1], to: statement, at: Int32(index + 1), sql: sql)
        }
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_ROW {
                try onRow(statement)
            } else if rc == SQLITE_DONE {
                return
            } else {
                throw error(sql: sql)
            }
        }
    }

    private func statement(for sql: String) throws -> Prepared {
        if let cached = cache[sql] { return cached }
        var statement: OpaquePointer?
        // The tail points into the C string given to prepare: it is read while that string lives. (Passing `sql`
        // straight to prepare made a temporary that was freed on return, and reading the tail after it read freed
        // memory: now and then "several statements" for a single one.)
        let (rc, rest) = sql.withCString { text -> (Int32, String) in
            var tail: UnsafePointer<CChar>?
            let rc = sqlite3_prepare_v3(handle, text, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, &tail)
            return (rc, tail.map { String(cString: $0) } ?? "")
        }
        guard rc == SQLITE_OK, let statement else { throw error(sql: sql) }
        guard rest.allSatisfy({ $0.isWhitespace || $0 == ";" }) else {
            sqlite3_finalize(statement)
            throw StoreError(.query, detail: "several statements given to execute/query", sql: sql)
        }
        var placeholders: [Int] = []
        for index in 0..<sqlite3_bind_parameter_count(statement) {
            let name = sqlite3_bind_parameter_name(statement, index + 1).map { String(cString: $0) }
            guard let name, name.hasPrefix("$"), let number = Int(name.dropFirst()), number >= 1 else {
                sqlite3_finalize(statement)
                throw StoreError(.query, detail: "placeholders must be $1, $2, … (found \(name ?? "?"))", sql: sql)
            }
            placeholders.append(number)
        }
        if cache.count >= Self.cacheLimit {
            for prepared in cache.values { sqlite3_finalize(prepared.statement) }
            cache.removeAll()
        }
        let prepared = Prepared(statement: statement, placeholders: placeholders)
        cache[sql] = prepared
        return prepared
    }

    private func bind(_ value: SQLValue, to statement: OpaquePointer, at index: Int32, sql: String) throws {
        let rc: Int32 =
            switch value {
            case .null: sqlite3_bind_null(statement, index)
            case .int(let v): sqlite3_bind_int64(statement, index, v)
            case .double(let d): sqlite3_bind_double(statement, index, d)
            case .text(let s): s.withCString { trifactor_sqlite_bind_text(statement, index, $0, Int32(s.utf8.count)) }
            }
        guard rc == SQLITE_OK else { throw error(sql: sql) }
    }

    private func value(_ statement: OpaquePointer, _ column: Int32) -> SQLValue {
        switch sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER: return .int(sqlite3_column_int64(statement, column))
        case SQLITE_FLOAT: return .double(sqlite3_column_double(statement, column))
        case SQLITE_NULL: return .null
        default:  // TEXT, and BLOB read as UTF-8 text (callers store binary data as text)
            guard let bytes = sqlite3_column_text(statement, column) else { return .null }
            let count = Int(sqlite3_column_bytes(statement, column))
            return .text(String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self))
        }
    }

    /// The connection's last error as a `StoreError` of the right kind.
    private func error(sql: String, message: String? = nil) -> StoreError {
        let code = sqlite3_extended_errcode(handle)
        let text = "SQLite error \(code): \(message ?? String(cString: sqlite3_errmsg(handle)))"
        let kind: StoreError.Kind =
            if Self.uniqueViolationCodes.contains(code) {
                .uniqueViolation
            } else if code & 0xFF == SQLITE_BUSY || code & 0xFF == SQLITE_LOCKED {
                .busy
            } else if code & 0xFF == SQLITE_CANTOPEN || code & 0xFF == SQLITE_IOERR { .unavailable } else { .query }
        return StoreError(kind, detail: text, sql: sql)
    }
}
