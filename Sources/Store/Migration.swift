import Foundation

/// A numbered, forward-only schema change.
///
/// `sql` may hold several statements separated by `;` and these dialect placeholders:
/// `{{id}}` → `INTEGER PRIMARY KEY AUTOINCREMENT` (SQLite) / `BIGSERIAL PRIMARY KEY` (PostgreSQL);
/// `{{bigint}}` → `INTEGER` / `BIGINT`; `{{real}}` → `REAL` / `DOUBLE PRECISION`.
package struct Migration: Sendable {
    /// A positive version, unique in the list; migrations run in ascending version order.
    package let version: Int
    /// A short name, recorded with the version.
    package let name: String
    /// The SQL, with dialect placeholders.
    package let sql: String

    /// A migration with `version`, `name` and `sql`.
    package init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }

    /// `sql` with the dialect placeholders replaced for `dialect`.
    package func sql(for dialect: SQLDialect) -> String {
        let replacements: [(String, String)] =
            switch dialect {
            case .sqlite:
                [("{{id}}", "INTEGER PRIMARY KEY AUTOINCREMENT"), ("{{bigint}}", "INTEGER"), ("{{real}}", "REAL")]
            case .postgres:
                [("{{id}}", "BIGSERIAL PRIMARY KEY"), ("{{bigint}}", "BIGINT"), ("{{real}}", "DOUBLE PRECISION")]
            }
        var text = sql
        for (placeholder, replacement) in replacements {
            text = text.replacingOccurrences(of: placeholder, with: replacement)
        }
        return text
    }
}

/// The migration procedure shared by both backends.
enum MigrationRunner {
    /// Key of the PostgreSQL advisory lock that serialises migrators ("TRIFACTR" in ASCII).
    static let advisoryLockKey: Int64 = 0x5452_4946_4143_5452

    static func migrate(_ migrations: [Migration], on database: any Database) throws -> [Int] {
        let sorted = migrations.sorted { $0.version < $1.version }
        for (earlier, later) in zip(sorted, sorted.dropFirst()) where earlier.version == later.version {
            throw StoreError(.migration, detail: "migration version \(later.version) appears twice")
        }
        if let first = sorted.first, first.version <= 0 {
            throw StoreError(.migration, detail: "migration versions must be positive, found \(first.version)")
        }
        let dialect = database.dialect
        try database.transaction { connection in
            try lock(connection, dialect)
            try connection.execute(createTable(dialect))
            // A database that a newer build has migrated is refused: this build
            // would ignore what the newer schema records (a device's approval key,
            // say) and act on the rest, which is how a rolling upgrade's old
            // instance could accept what the new ones refuse.
            let newest =
                try connection.queryOne("SELECT MAX(version) AS v FROM schema_migrations")?.optionalInt("v") ?? 0
            if let known = sorted.last?.version, newest > known {
                throw StoreError(
                    .migration,
                    detail:
                        "the database is at schema version \(newest), newer than this build's \(known): run the newer build"
                )
            }
        }
        var applied: [Int] = []
        for migration in sorted {
            let didApply = try database.transaction { connection -> Bool in
                try lock(connection, dialect)
                let current =
                    try connection.queryOne("SELECT MAX(version) AS v FROM schema_migrations")?.optionalInt("v") ?? 0
                guard migration.version > current else { return false }
                guard let script = connection as? any BackendConnection else {
                    throw StoreError(.migration, detail: "connection cannot run scripts")
                }
                do {
                    try script.executeScript(migration.sql(for: dialect))
                } catch let error as StoreError {
                    throw error.kind == .unavailable || error.kind == .busy
                        ? error
                        : error.relabelled(.migration, context: "migration \(migration.version) \(migration.name)")
                }
                try connection.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                    [.int(Int64(migration.version)), .text(migration.name)])
                return true
            }
            if didApply { applied.append(migration.version) }
        }
        return applied
    }

    static func appliedMigrations(on database: any Database) throws -> [Int] {
        let exists =
            database.dialect == .sqlite
            ? "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
            : "SELECT to_regclass('schema_migrations')::text AS name"
        return try database.read { connection in
            guard try connection.queryOne(exists)?.optionalText("name") != nil else { return [] }
            return try connection.query("SELECT version FROM schema_migrations ORDER BY version")
                .map { Int(try $0.int("version")) }
        }
    }

    private static func lock(_ connection: any SQLConnection, _ dialect: SQLDialect) throws {
        // SQLite: BEGIN IMMEDIATE already holds the write lock. PostgreSQL: an advisory lock
        // released at commit serialises concurrent migrators, including the CREATE TABLE.
        if dialect == .postgres {
            _ = try connection.query("SELECT pg_advisory_xact_lock($1)", [.int(advisoryLockKey)])
        }
    }

    private static func createTable(_ dialect: SQLDialect) -> String {
        switch dialect {
        case .sqlite:
            "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                + "applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)"
        case .postgres:
            "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, "
                + "applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        }
    }
}
