import API
import Core
import Crypto
import Foundation
import Logging
import Store
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

@Suite("Schema upgrades keep what was written before")
struct SchemaUpgradeTests {
    @Test(
        "a device enrolled before approval keys (schema 12) reads, after the upgrade, as one key that is not approval-bound",
        arguments: Backend.all)
    func deviceBeforeApprovalKeys(backend: Backend) throws {
        try backend.withFreshDatabase { db, _ throws in
            let before = Schema.migrations.filter { $0.version <= 12 }
            #expect(try db.migrate(before).last == 12)
            let key = try DeviceKey().publicKey
            try db.transaction { connection in
                try connection.execute(
                    "INSERT INTO users (id, email, password_hash, created_at) VALUES ('u1', 'old@example.com', 'x', 1)")
                try connection.execute(
                    """
                    INSERT INTO mfa_factors (id, user_id, kind, display_name, public_key, created_at)
                    VALUES ('f1', 'u1', 'device', 'Old phone', $1, 2)
                    """, [.text(key)])
            }
            #expect(try db.migrate(Schema.migrations) == Schema.migrations.filter { $0.version > 12 }.map(\.version))
            let factors = try db.transaction { try FactorRepository.list(UserID("u1"), on: $0) }
            let device = try #require(factors.first)
            #expect(factors.count == 1 && device.kind == .device)
            #expect(device.api.approvalBound == false && device.api.approvalGate == nil)
            #expect(device.methods == [.hwk])
            guard case .device(let keys) = device.credential else {
                Issue.record("a device row reads as a device")
                return
            }
            #expect(keys.approval == nil)
            let stored = try ECDSAPublicKey(subjectPublicKeyInfo: Array(try #require(Data(base64Encoded: key))))
            #expect(
                keys.approving.canonicalSubjectPublicKeyInfo == stored.canonicalSubjectPublicKeyInfo,
                "the one key approves, as before the upgrade")
        }
    }

    /// The schema before this build's last migration (the version below it: versions may skip one another
    /// branch holds).
    static let previous = Schema.migrations.map(\.version).sorted().dropLast().last!

    /// A database at the previous schema (one migration behind this build) holding one account.
    static func older(_ db: any Database) throws -> [Int] {
        try db.migrate(Schema.migrations.filter { $0.version <= previous })
        try db.transaction { connection in
            try connection.execute(
                "INSERT INTO users (id, email, password_hash, created_at) VALUES ('u1', 'kept@example.com', 'x', 1)")
        }
        return Schema.migrations.filter { $0.version > previous }.map(\.version)
    }

    static func configuration(_ url: String, _ policy: SchemaUpgrade.Policy) -> Configuration {
        var c = Configuration()
        c.databaseURL = url
        c.migrateOnStart = policy
        return c
    }

    /// The backups made beside the SQLite file of `url`.
    static func backups(_ url: String) throws -> [String] {
        let path = try #require(SQLiteBackup.path(of: url))
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let name = URL(fileURLWithPath: path).lastPathComponent
        // Opening a copy gives it -wal and -shm files of its own: those are not copies.
        return try FileManager.default.contentsOfDirectory(atPath: folder)
            .filter { $0.hasPrefix(name + ".before-v") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }
            .map { folder + "/" + $0 }
    }

    @Test(
        "at start, a SQLite database is copied beside itself (named after its schema) before its migrations run; PostgreSQL is left to the operator's migrate",
        arguments: Backend.all)
    func upgradeAtStart(backend: Backend) throws {
        try backend.withFreshDatabase { db, url throws in
            let expected = try Self.older(db)
            #expect(try SchemaUpgrade.pending(db).map(\.version) == expected)
            if backend.dialect == .postgres {
                let refused = #expect(throws: ResourceFailure.self) {
                    try SchemaUpgrade.atStart(Self.configuration(url, .auto), db, logger: Logger { _ in })
                }
                #expect(refused?.description.contains("run `trifactord migrate`") == true)
                #expect(try SchemaUpgrade.pending(db).map(\.version) == expected, "nothing was applied")
                #expect(
                    try SchemaUpgrade.atStart(Self.configuration(url, .always), db, logger: Logger { _ in }) == expected
                )
                return
            }
            #expect(throws: ResourceFailure.self) {
                try SchemaUpgrade.atStart(Self.configuration(url, .never), db, logger: Logger { _ in })
            }
            #expect(try Self.backups(url).isEmpty, "a refused start copies nothing")
            #expect(try SchemaUpgrade.atStart(Self.configuration(url, .auto), db, logger: Logger { _ in }) == expected)
            #expect(try SchemaUpgrade.pending(db).isEmpty)
            let backup = try #require(try Self.backups(url).first)
            #expect(backup.contains(".before-v\(Self.previous)."))
            // The copy is the database as it was: the previous schema, the account in it, readable by its owner alone.
            let copy = try Store.openDatabase(url: "sqlite:" + backup, poolSize: 1)
            defer { copy.close() }
            #expect(try copy.appliedMigrations().max() == Self.previous)
            #expect(try copy.transaction { try $0.query("SELECT email FROM users", []) }.count == 1)
            let mode = try #require(try FileManager.default.attributesOfItem(atPath: backup)[.posixPermissions] as? Int)
            #expect(mode & 0o077 == 0)
            // Started again: nothing pending, no second copy.
            #expect(try SchemaUpgrade.atStart(Self.configuration(url, .auto), db, logger: Logger { _ in }).isEmpty)
            #expect(try Self.backups(url).count == 1)
        }
    }

    @Test("a migration that fails half-way on SQLite leaves the backup and a sentence that names it")
    func failedMigration() throws {
        try Backend.all[0].withFreshDatabase { db, url throws in
            _ = try Self.older(db)
            let broken =
                Schema.migrations + [
                    Migration(
                        version: 9_999, name: "broken",
                        sql: "CREATE TABLE half (a INTEGER); INSERT INTO missing VALUES (1)")
                ]
            let failure = #expect(throws: ResourceFailure.self) {
                try SchemaUpgrade.apply(Self.configuration(url, .auto), db, logger: Logger { _ in }, migrations: broken)
            }
            let backup = try #require(try Self.backups(url).first)
            #expect(failure?.description.hasPrefix("A migration failed: ") == true)
            #expect(failure?.description.contains(backup) == true)
            // The broken migration left nothing behind (its transaction rolled back); the ones before it stay applied.
            #expect(try db.appliedMigrations().max() == Schema.migrations.map(\.version).max())
            #expect(
                try db.transaction { try $0.query("SELECT name FROM sqlite_master WHERE name = 'half'", []) }.isEmpty)
        }
    }

    @Test(
        "a database that a newer build migrated is refused with a sentence, never migrated down", arguments: Backend.all
    )
    func newerRefused(backend: Backend) throws {
        try backend.withFreshDatabase { db, _ throws in
            try db.migrate(
                Schema.migrations + [Migration(version: 9_999, name: "future", sql: "CREATE TABLE future (a INTEGER)")])
            let refusal = #expect(throws: ResourceFailure.self) { try SchemaUpgrade.pending(db) }
            #expect(refusal?.description.contains("newer than this build's") == true)
        }
    }
}
