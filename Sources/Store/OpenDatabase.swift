/// Opens a database from a URL.
///
/// Accepted forms:
/// - `sqlite:PATH` (or `sqlite://PATH`, so `sqlite:///var/lib/x.db` is absolute): a SQLite file,
///   created with its parent directory when missing. `sqlite::memory:` is rejected: each pooled
///   connection would see its own empty database.
/// - `postgres://user:pass@host:port/db?...` or `postgresql://...`: handed to libpq as is.
/// - `postgres:` followed by a libpq keyword string, e.g.
///   `postgres:host=/tmp/x port=5432 user=postgres dbname=postgres`.
///
/// - Parameters:
///   - url: the database URL.
///   - poolSize: the number of connections (default 4 for both backends).
/// - Throws: `StoreError` `.invalidURL` for a URL it cannot use, `.unavailable` when the database
///   cannot be opened or reached.
package func openDatabase(url: String, poolSize: Int? = nil) throws -> any Database {
    try openDatabase(url: url, poolSize: poolSize, readOnly: false)
}

/// `openDatabase(url:poolSize:)`, and with `readOnly` a SQLite file that must exist is opened for reading alone
/// (PostgreSQL connections are the same either way: only what the caller runs decides).
package func openDatabase(url: String, poolSize: Int? = nil, readOnly: Bool) throws -> any Database {
    let size = max(1, poolSize ?? 4)
    let lower = url.lowercased()
    if lower.hasPrefix("sqlite:") {
        var path = String(url.dropFirst("sqlite:".count))
        if path.hasPrefix("//") { path.removeFirst(2) }
        guard !path.isEmpty else { throw StoreError(.invalidURL, detail: "sqlite: URL without a path") }
        guard path != ":memory:", !path.hasPrefix("file:") else {
            throw StoreError(.invalidURL, detail: "in-memory and file: SQLite URLs are not supported; give a file path")
        }
        return try SQLiteDatabase(path: path, poolSize: size, readOnly: readOnly)
    }
    let conninfo: String
    if lower.hasPrefix("postgres://") || lower.hasPrefix("postgresql://") {
        conninfo = url
    } else if lower.hasPrefix("postgres:") {
        conninfo = String(url.dropFirst("postgres:".count))
    } else {
        let scheme = url.split(separator: ":", maxSplits: 1).first.map(String.init) ?? ""
        throw StoreError(
            .invalidURL, detail: "unknown database URL scheme \"\(scheme.prefix(20))\"; use sqlite: or postgres://")
    }
    try PostgresDatabase.validate(conninfo)
    return try PostgresDatabase(conninfo: conninfo, poolSize: size)
}
