/// A connection inside one open transaction, handed to the body of `Database.transaction`.
///
/// SQL uses PostgreSQL-style placeholders `$1`, `$2`, … in both backends; a placeholder may be
/// used several times and in any order. Statements with `RETURNING` go through `query`.
/// - Important: use it only inside the transaction body, on the thread that runs the body.
package protocol SQLConnection {
    /// Runs one statement and returns the number of rows it changed.
    /// - Throws: `StoreError` (`.uniqueViolation`, `.busy`, `.query`, `.unavailable`).
    @discardableResult func execute(_ sql: String, _ parameters: [SQLValue]) throws -> Int
    /// Runs one statement and returns all its rows.
    /// - Throws: `StoreError` (`.uniqueViolation`, `.busy`, `.query`, `.unavailable`).
    func query(_ sql: String, _ parameters: [SQLValue]) throws -> [Row]
}

extension SQLConnection {
    /// Runs one statement without parameters and returns the number of rows it changed.
    /// - Throws: `StoreError`.
    @discardableResult package func execute(_ sql: String) throws -> Int { try execute(sql, []) }

    /// Runs one statement without parameters and returns all its rows.
    /// - Throws: `StoreError`.
    package func query(_ sql: String) throws -> [Row] { try query(sql, []) }

    /// Runs one statement and returns its first row, or nil when there is none.
    /// - Throws: `StoreError`.
    package func queryOne(_ sql: String, _ parameters: [SQLValue] = []) throws -> Row? {
        try query(sql, parameters).first
    }
}

/// What a pooled backend connection offers beyond `SQLConnection`.
protocol BackendConnection: AnyObject, SQLConnection {
    /// True when the connection must not go back to the pool (lost, or stuck in a transaction).
    var isBroken: Bool { get }
    /// Runs SQL that may hold several statements separated by `;` (migrations).
    func executeScript(_ sql: String) throws
    /// Runs `body` between `begin` and `COMMIT`, rolling back when it throws.
    func inTransaction<T>(begin: String, _ body: (any SQLConnection) throws -> T) throws -> T
}
