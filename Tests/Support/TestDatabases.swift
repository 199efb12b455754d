import Foundation
package import Store
import Testing

/// The backends the store suite runs against: always SQLite (a temp file), and PostgreSQL when
/// `TRIFACTOR_TEST_POSTGRES_URL` is set (see `scripts/with-postgres.sh`).
package struct Backend: Sendable, CustomTestStringConvertible {
    package let dialect: SQLDialect
    package var testDescription: String { dialect.rawValue }

    package static let postgresURL: String? = ProcessInfo.processInfo.environment["TRIFACTOR_TEST_POSTGRES_URL"].flatMap
    { $0.isEmpty ? nil : $0 }
    package static let isCI =
        ProcessInfo.processInfo.environment["CI"].map { !$0.isEmpty && $0 != "0" && $0 != "false" } ?? false
    package static let all: [Backend] =
        [Backend(dialect: .sqlite)] + (postgresURL == nil ? [] : [Backend(dialect: .postgres)])

    /// Runs `body` with a fresh, empty database of this backend and its URL, and removes it afterwards:
    /// a SQLite file in a new temp directory, or a PostgreSQL schema `t_<random>` put first on the search path.
    package func withFreshDatabase<T>(poolSize: Int? = nil, _ body: (any Database, String) throws -> T) throws -> T {
        let fresh = try FreshDatabase(self, poolSize: poolSize)
        defer { fresh.remove() }
        return try body(fresh.database, fresh.url)
    }

    /// `withFreshDatabase` for async bodies.
    package func withFreshDatabase<T>(poolSize: Int? = nil, _ body: (any Database, String) async throws -> T)
        async throws -> T
    {
        let fresh = try FreshDatabase(self, poolSize: poolSize)
        defer { fresh.remove() }
        return try await body(fresh.database, fresh.url)
    }

    /// A fresh database and how to remove it.
    private struct FreshDatabase {
        let database: any Database
        let url: String
        let remove: () -> Void

        init(_ backend: Backend, poolSize: Int?) throws {
            let name = "t_" + String(UInt64.random(in: .min ... .max), radix: 16)
            switch backend.dialect {
            case .sqlite:
                let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-tests-\(name)")
                url = "sqlite:\(directory.path)/nested/test.db"
                let database = try openDatabase(url: url, poolSize: poolSize)
                self.database = database
                remove = {
                    database.close()
                    try? FileManager.default.removeItem(at: directory)
                }
            case .postgres:
                let base = try #require(Backend.postgresURL)
                let admin = try openDatabase(url: base, poolSize: 1)
                do {
                    try admin.transaction { try $0.execute("CREATE SCHEMA \(name)") }
                    url = Backend.url(base, searchPath: name)
                    let database = try openDatabase(url: url, poolSize: poolSize)
                    self.database = database
                    remove = {
                        database.close()
                        _ = try? admin.transaction { try $0.execute("DROP SCHEMA \(name) CASCADE") }
                        admin.close()
                    }
                } catch {
                    admin.close()
                    throw error
                }
            }
        }
    }

    /// `base` with libpq's `options=-csearch_path=<schema>` added (URL or `postgres:` keyword form).
    private static func url(_ base: String, searchPath schema: String) -> String {
        if base.contains("://") {
            return base + (base.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)"
        }
        return base + " options='-csearch_path=\(schema)'"
    }
}

/// Runs `body` in `count` threads at once and waits for all of them.
package func runThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        Thread {
            body(index)
            group.leave()
        }.start()
    }
    group.wait()
}

/// The `StoreError` kind that `body` throws, or nil when it throws nothing or something else.
package func storeErrorKind<T>(_ body: () throws -> T) -> StoreError.Kind? {
    do {
        _ = try body()
        return nil
    } catch {
        return (error as? StoreError)?.kind
    }
}
