internal import CPostgres
import Foundation

/// One libpq connection (blocking calls) with its cache of prepared statements.
///
/// Each statement text is parsed, analysed and planned by the server once per connection
/// (`PQprepare`), then only bound and run (`PQexecPrepared`): as SQLite's connections keep
/// theirs. Sent unprepared each time, the parse and plan took about half of PostgreSQL's CPU
/// under the phone verification load.
final class PostgresConnection: BackendConnection {
    private static let cacheLimit = 256
    private let handle: OpaquePointer
    /// Statement text → the name it was prepared under on this connection.
    private var prepared: [String: String] = [:]
    private var preparedCount = 0

    /// Connects with `conninfo` (a `postgres://` URL or a keyword string).
    init(conninfo: String) throws {
        // connect_timeout comes first so a value in the URL overrides it.
        let keywords = ["connect_timeout", "dbname"]
        let values = ["10", conninfo]
        let connection = withCStrings(keywords) { k in withCStrings(values) { v in PQconnectdbParams(k, v, 1) } }
        guard let connection else { throw StoreError(.unavailable, detail: "libpq could not allocate a connection") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(connection))
            PQfinish(connection)
            throw StoreError(.unavailable, detail: "cannot connect to PostgreSQL: \(message)")
        }
        handle = connection
        try executeScript("SET client_min_messages = warning")  // NOTICEs would spam stderr
        // A lock held elsewhere fails the statement after 5 s (busy, so a 503), as SQLite's busy timeout does.
        try executeScript("SET lock_timeout = '5s'")
    }

    deinit { PQfinish(handle) }

    var isBroken: Bool { PQstatus(handle) != CONNECTION_OK || PQtransactionStatus(handle) != PQTRANS_IDLE }

    func execute(_ sql: String, _ parameters: [SQLValue]) throws -> Int {
        try withResult(sql, parameters) { result in Int(String(cString: PQcmdTuples(result))) ?? 0 }
    }

    func query(_ sql: String, _ parameters: [SQLValue]) throws -> [Row] {
        try withResult(sql, parameters) { result in
            let rowCount = PQntuples(result)
            let columnCount = PQnfields(result)
            let columns = (0..<columnCount).map { String(cString: PQfname(result, $0)).lowercased() }
            let types = (0..<columnCount).map { PQftype(result, $0) }
            var rows: [Row] = []
            rows.reserveCapacity(Int(rowCount))
            for row in 0..<rowCount {
                let values = (0..<columnCount).map { column -> SQLValue in
                    guard PQgetisnull(result, row, column) == 0 else { return .null }
                    return Self.decode(String(cString: PQgetvalue(result, row, column)), oid: types[Int(column)])
                }
                rows.append(Row(lowercasedColumns: columns, values: values))
            }
            return rows
        }
    }

    /// Runs `sql` (which may hold several statements). A script may change the schema the cached
    /// statements were planned against (a migration), so they are dropped first.
    func executeScript(_ sql: String) throws {
        try forgetPreparedStatements()
        try check(PQexec(handle, sql), sql: sql) { _ in }
    }

    func inTransaction<T>(begin: String, _ body: (any SQLConnection) throws -> T) throws -> T {
        do {
            try check(PQexec(handle, begin), sql: begin) { _ in }
        } catch let error as StoreError where isBroken {
            throw StaleConnection(error: error)  // nothing ran yet: the caller may retry on another connection
        }
        do {
            let result = try body(self)
            // COMMIT of a transaction aborted by an earlier (caught) error answers "ROLLBACK".
            let status = try check(PQexec(handle, "COMMIT"), sql: "COMMIT") { String(cString: PQcmdStatus($0)) }
            guard status == "COMMIT" else {
                throw StoreError(
                    .query, detail: "the transaction was rolled back after an earlier error", sql: "COMMIT")
            }
            return result
        } catch {
            if PQtransactionStatus(handle) != PQTRANS_IDLE {
                PQclear(PQexec(handle, "ROLLBACK"))  // if it fails, isBroken drops the connection
            }
            throw error
        }
    }

    /// Runs `sql`, prepared on first use, with every parameter as text (the server infers the
    /// types when it prepares it) and reads the result.
    private func withResult<T>(_ sql: String, _ parameters: [SQLValue], _ read: (OpaquePointer) throws -> T) throws -> T
    {
        let name = try statementName(for: sql)
        let texts: [String?] = parameters.map(Self.encode)
        let result = withOptionalCStrings(texts) { values in
            PQexecPrepared(handle, name, Int32(texts.count), values, nil, nil, 0)
        }
        return try check(result, sql: sql, read)
    }

    /// The name `sql` is prepared under, preparing it first if needed. A statement prepared
    /// inside a transaction that later rolls back stays prepared (the server keeps it for the
    /// session); one that fails to prepare is not cached, and its error is the statement's.
    private func statementName(for sql: String) throws -> String {
        if let name = prepared[sql] { return name }
        if prepared.count >= Self.cacheLimit { try forgetPreparedStatements() }
        preparedCount += 1
        let name = "trifactor_\(preparedCount)"
        try check(PQprepare(handle, name, sql, 0, nil), sql: sql) { _ in }
        prepared[sql] = name
        return name
    }

    /// Deallocates every cached statement on the server and forgets them.
    private func forgetPreparedStatements() throws {
        guard !prepared.isEmpty else { return }
        try check(PQexec(handle, "DEALLOCATE ALL"), sql: "DEALLOCATE ALL") { _ in }
        prepared.removeAll()
    }

    /// Checks `result`, passes it to `read` when it succeeded, and clears it on every path.
    @discardableResult
    private func check<T>(_ result: OpaquePointer?, sql: String, _ read: (OpaquePointer) throws -> T) throws -> T {
        guard let result else {
            throw StoreError(.unavailable, detail: String(cString: PQerrorMessage(handle)), sql: sql)
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY else {
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) } ?? ""
            let message = String(cString: PQresultErrorMessage(result)).trimmingCharacters(in: .whitespacesAndNewlines)
            let kind: StoreError.Kind =
                if state == "23505" { .uniqueViolation } else if ["40001", "40P01", "55P03"].contains(state) {
                    .busy
                } else if PQstatus(handle) != CONNECTION_OK || state.hasPrefix("08") || state.hasPrefix("57P") {
                    .unavailable
                } else { .query }
            throw StoreError(kind, detail: "PostgreSQL \(state): \(message)", sql: sql)
        }
        return try read(result)
    }

    private static func encode(_ value: SQLValue) -> String? {
        switch value {
        case .null: nil
        case .int(let v): String(v)
        case .text(let s): s
        case .double(let d):
            d.isNaN ? "NaN" : d == .infinity ? "Infinity" : d == -.infinity ? "-Infinity" : "\(d)"
        }
    }

    private static func decode(_ text: String, oid: Oid) -> SQLValue {
        switch oid {
        case 20, 21, 23, 26: Int64(text).map(SQLValue.int) ?? .text(text)  // int8, int2, int4, oid
        case 700, 701, 1700: Double(text).map(SQLValue.double) ?? .text(text)  // float4, float8, numeric
        case 16: .int(text == "t" ? 1 : 0)  // bool
        default: .text(text)
        }
    }
}

/// Thrown by `inTransaction` when `BEGIN` failed because the connection was lost (e.g. the server
/// restarted while it sat in the pool): nothing has run, so a fresh connection may be tried.
struct StaleConnection: Error {
    let error: StoreError
}

/// Calls `body` with a C array of C strings that live for the duration of the call.
private func withCStrings<T>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> T) -> T {
    withOptionalCStrings(strings.map(Optional.some), body)
}

/// Like `withCStrings`, with NULL entries for nil.
private func withOptionalCStrings<T>(_ strings: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> T) -> T {
    let copies = strings.map { $0.flatMap { strdup($0) } }
    defer { for copy in copies { free(copy) } }
    let pointers = copies.map { $0.map { UnsafePointer($0) } } + [nil]
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
