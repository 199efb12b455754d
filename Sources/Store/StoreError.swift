/// An error from the store.
///
/// `description` is short and leaks nothing (no SQL text, no database message, no URL);
/// `debugDescription` carries the full detail for logs.
package struct StoreError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// What went wrong; the raw value is a stable code.
    package enum Kind: String, Sendable {
        /// The database URL could not be understood.
        case invalidURL = "store.invalid_url"
        /// The database cannot be reached, or no connection became free in time.
        case unavailable = "store.unavailable"
        /// A unique or primary key constraint was violated.
        case uniqueViolation = "store.unique_violation"
        /// The database was locked or the transaction lost a conflict (worth retrying).
        case busy = "store.busy"
        /// The database rejected a statement.
        case query = "store.query"
        /// A value read from the database did not have the expected type.
        case decoding = "store.decoding"
        /// A schema migration failed or the migration list is inconsistent.
        case migration = "store.migration"
        /// A database file can be read by users other than its owner; the
        /// detail names the files and the `chmod` that fixes them.
        case exposedFile = "store.exposed_file"
    }

    /// What went wrong.
    package let kind: Kind
    /// Database message and other detail, for logs only.
    package let detail: String
    /// The SQL text involved, if any, for logs only.
    package let sql: String?

    /// An error of `kind` with log-only `detail` and, optionally, the SQL involved.
    package init(_ kind: Kind, detail: String, sql: String? = nil) {
        self.kind = kind
        self.detail = detail
        self.sql = sql
    }

    /// The stable code, e.g. `store.unique_violation`.
    package var code: String { kind.rawValue }

    /// A short sentence that is safe to log anywhere.
    package var description: String {
        let message =
            switch kind {
            case .invalidURL: "the database URL is not valid"
            case .unavailable: "the database is unavailable"
            case .uniqueViolation: "a unique constraint was violated"
            case .busy: "the database is busy"
            case .query: "a database statement failed"
            case .decoding: "a database value had an unexpected type"
            case .migration: "a database migration failed"
            case .exposedFile: "a database file can be read by other users"
            }
        return "\(message) (\(code))"
    }

    /// Everything known: description, detail and SQL text.
    package var debugDescription: String {
        var text = "\(description): \(detail)"
        if let sql { text += " [SQL: \(sql)]" }
        return text
    }

    /// The same error re-labelled as `kind`, keeping its detail.
    func relabelled(_ kind: Kind, context: String) -> StoreError {
        StoreError(kind, detail: "\(context): \(description): \(detail)", sql: sql)
    }
}
