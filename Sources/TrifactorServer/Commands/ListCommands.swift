import API
import Foundation
import Logging
import Store

/// `trifactord audit tail` and `trifactord users list`.
enum ListCommands {
    static func auditTail(_ config: Configuration, _ options: ListingOptions) throws {
        let entries = try withDatabase(config) { db in try db.read { try AuditLog.tail(limit: options.limit, on: $0) } }
        if options.json {
            for e in entries {
                let object: [String: Any] = [
                    "seq": e.seq, "at": WireJSON.format(e.at), "kind": e.kind, "outcome": e.outcome,
                    "user_id": e.userID ?? NSNull(), "ip": e.ip ?? NSNull(), "user_agent": e.userAgent ?? NSNull(),
                    "detail": e.detail ?? NSNull(),
                ]
                let data = try JSONSerialization.data(
                    withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
                print(String(decoding: data, as: UTF8.self))
            }
            return
        }
        if entries.isEmpty {
            print("The audit log is empty.")
            return
        }
        for e in entries {
            print(
                [
                    WireJSON.format(e.at), e.kind, e.outcome, "user=\(e.userID ?? "-")", "ip=\(e.ip ?? "-")",
                    e.detail ?? "",
                ]
                .joined(separator: "  ").trimmingCharacters(in: .whitespaces))
        }
    }

    static func usersList(_ config: Configuration, _ options: ListingOptions) throws {
        let users = try withDatabase(config) { db in
            try db.read { try AccountRepository.list(limit: options.limit, on: $0) }
        }
        if options.json {
            let data = try WireJSON.encoder().encode(users.map(\.info))
            print(String(decoding: data, as: UTF8.self))
            return
        }
        if users.isEmpty {
            print("There are no accounts yet.")
            return
        }
        for u in users.map(\.info) {
            print(
                [
                    u.id, u.email, u.emailVerified ? "verified" : "unverified", WireJSON.format(u.createdAt),
                    u.displayName ?? "",
                ]
                .joined(separator: "  ").trimmingCharacters(in: .whitespaces))
        }
    }

    /// Opens the configured database for one command, brought to this build's schema by the same rule as
    /// `serve` (a SQLite database copied first; PostgreSQL's left to `trifactord migrate`), so a new one lists
    /// nothing rather than failing and no command migrates a cluster's database behind the operator's back.
    static func withDatabase<T>(_ config: Configuration, _ body: (any Database) throws -> T) throws -> T {
        let database = try openDatabase(url: config.databaseURL, poolSize: 1)
        defer { database.close() }
        _ = try SchemaUpgrade.atStart(config, database, logger: .standardError)
        return try body(database)
    }
}
