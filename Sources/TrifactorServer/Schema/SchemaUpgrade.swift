import Foundation
import Glibc
package import Logging
package import Store

/// Bringing a database to this build's schema without risking its data: the
/// migrations it lacks are listed (`trifactord migrate --check`), a SQLite
/// database is copied beside itself before any is applied, one that a newer
/// build migrated is refused, and a PostgreSQL database is migrated by the
/// operator's command, not by whichever instance starts first (unless they
/// say so). Concurrent migrators wait for each other (`MigrationRunner`).
package enum SchemaUpgrade {
    /// What `serve` does with pending migrations (`TRIFACTOR_MIGRATE_ON_START`).
    package enum Policy: String, Sendable {
        /// SQLite: back up, then migrate. PostgreSQL: refuse, naming `trifactord migrate`.
        case auto
        /// Migrate either database (a SQLite one after its backup).
        case always
        /// Refuse on both.
        case never
    }

    /// The migrations of this build the database has not run, oldest first.
    /// - Throws: `ResourceFailure` when a newer build has migrated it (never migrated down).
    package static func pending(_ database: any Database, of migrations: [Migration] = Schema.migrations) throws
        -> [Migration]
    {
        let applied = Set(try database.appliedMigrations())
        let known = migrations.sorted { $0.version < $1.version }
        if let newest = applied.max(), let mine = known.last?.version, newest > mine {
            throw ResourceFailure(
                description:
                    "The database is at schema version \(newest), newer than this build's \(mine): run the newer build (a database is never migrated down)."
            )
        }
        // As the runner applies them: the versions above the highest applied.
        let highest = applied.max() ?? 0
        return known.filter { $0.version > highest }
    }

    /// `15 (oidc), 16 (…)`.
    package static func describe(_ migrations: [Migration]) -> String {
        migrations.map { "\($0.version) (\($0.name))" }.joined(separator: ", ")
    }

    /// Whether `serve` applies pending migrations itself (else it refuses the database), for `atStart` and the doctor.
    static func migratesAtStart(_ policy: Policy, _ dialect: SQLDialect) -> Bool {
        switch policy {
        case .always: true
        case .never: false
        case .auto: dialect == .sqlite
        }
    }

    /// At `serve`: applies what is pending when the policy allows it, or refuses with the command to run.
    /// - Returns: the versions applied.
    static func atStart(
        _ configuration: Configuration, _ database: any Database, logger: Logger,
        migrations: [Migration] = Schema.migrations
    ) throws -> [Int] {
        let pending = try pending(database, of: migrations)
        guard !pending.isEmpty else { return [] }
        guard migratesAtStart(configuration.migrateOnStart, database.dialect) else {
            throw ResourceFailure(
                description:
                    "The database needs migrations \(describe(pending)) before this build can serve it: back it up, run `trifactord migrate` with the same settings, then start again (or set TRIFACTOR_MIGRATE_ON_START=always)."
            )
        }
        return try apply(configuration, database, logger: logger, migrations: migrations)
    }

    /// Backs a SQLite database up beside itself (when it has a schema to lose), then migrates.
    /// - Throws: `ResourceFailure` naming the backup when a migration fails.
    package static func apply(
        _ configuration: Configuration, _ database: any Database, logger: Logger,
        migrations: [Migration] = Schema.migrations
    ) throws -> [Int] {
        let pending = try pending(database, of: migrations)
        guard !pending.isEmpty else { return [] }
        // Under systemd (Type=notify) the copy and the migrations may outlast the start timeout: ask for time,
        // sized to the file (a copy and its integrity check read it twice, at a slow disk's 25 MB/s), 10 minutes at least.
        var size = stat()
        let bytes =
            SQLiteBackup.path(of: configuration.databaseURL).flatMap {
                stat($0, &size) == 0 ? Double(size.st_size) : nil
            }
            ?? 0
        let seconds = max(600, 2 * bytes / 25_000_000 + 300)
        ServiceNotify.send(
            "STATUS=Applying \(pending.count) database migration\(pending.count == 1 ? "" : "s")\nEXTEND_TIMEOUT_USEC=\(Int(seconds * 1_000_000))"
        )
        let backup = try backUp(configuration, database, logger: logger)
        do {
            return try database.migrate(migrations)
        } catch let error as StoreError {
            let kept =
                backup.map {
                    " The database as it was before is at \($0): to go back, stop trifactord and put it in the database's place."
                } ?? ""
            throw ResourceFailure(description: "A migration failed: \(error.detail).\(kept)")
        }
    }

    /// The copy of a SQLite database made before migrating it, named after its schema version and the time
    /// (`trifactor.db.before-v14.20261206T083500Z`); nil for PostgreSQL (back it up with its own tools) and for a
    /// database with no schema yet.
    private static func backUp(_ configuration: Configuration, _ database: any Database, logger: Logger) throws
        -> String?
    {
        guard database.dialect == .sqlite, let path = SQLiteBackup.path(of: configuration.databaseURL),
            let version = try database.appliedMigrations().max()
        else { return nil }
        let stamp = ISO8601DateFormatter.string(
            from: Date(), timeZone: TimeZone(identifier: "UTC")!,
            formatOptions: [.withYear, .withMonth, .withDay, .withTime, .withTimeZone])
        let destination = "\(path).before-v\(version).\(stamp.replacingOccurrences(of: ":", with: ""))"
        do {
            let report = try SQLiteBackup.copy(url: configuration.databaseURL, to: destination)
            logger.log(
                .info, "backup_before_migration",
                ["path": .string(destination), "schema": .int(version), "bytes": .int(report.bytes)])
            return destination
        } catch let error as StoreError {
            throw ResourceFailure(
                description: "No migration was applied: the backup before it failed (\(error.detail)).")
        }
    }
}
