import Foundation
import Store

/// `trifactord backup PATH [--database-url URL]`: a consistent online copy
/// of the SQLite database while the server runs (SQLite's backup API),
/// checked before it is put at PATH. PostgreSQL is backed up with its own
/// tools (pg_dump, base backups): the command says so.
enum BackupCommand {
    static let usage = """
        Usage: trifactord backup PATH [--database-url URL]

        Copies the SQLite database to PATH while the server goes on serving (SQLite's online
        backup API), checks the copy with PRAGMA integrity_check, and only then puts it at PATH.
        PATH must not exist. To restore, stop trifactord and put the copy in the database's place.
        """

    static func run(_ arguments: [String], environment: [String: String]) throws {
        guard let path = arguments.first, !path.hasPrefix("-"), !path.isEmpty else {
            throw ConfigurationParser.Failure(
                description: "Say where the copy goes, first: trifactord backup PATH [--database-url URL].")
        }
        let config = try ConfigurationParser.parse(arguments: Array(arguments.dropFirst()), environment: environment)
        let started = Date()
        do {
            let report = try SQLiteBackup.copy(url: config.databaseURL, to: path)
            print(
                "Backed up \(report.pages) pages (\(report.bytes) bytes) to \(path) in \(String(format: "%.2f", Date().timeIntervalSince(started))) s; integrity check ok."
            )
        } catch let error as StoreError {
            throw ConfigurationParser.Failure(description: "No backup was made: \(error.detail).")
        }
    }
}
