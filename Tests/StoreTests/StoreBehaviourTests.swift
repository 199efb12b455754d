import Foundation
import Store
import Synchronization
import Testing
import TrifactorTestSupport

/// The same behaviour, proved on every backend in `Backend.all`.
@Suite("Store behaviour")
struct StoreBehaviourTests {
    static let base = [
        Migration(
            version: 1, name: "counters",
            sql: """
                CREATE TABLE counters (id {{bigint}} PRIMARY KEY, n {{bigint}} NOT NULL);
                CREATE TABLE items (id {{id}}, name TEXT NOT NULL UNIQUE, score {{real}})
                """),
        Migration(
            version: 2, name: "seed",
            sql: "INSERT INTO counters (id, n) VALUES (1, 0); ALTER TABLE items ADD COLUMN note TEXT"),
    ]

    @Test("migrations apply once, in order, and re-running applies nothing", arguments: Backend.all)
    func migrations(backend: Backend) throws {
        try backend.withFreshDatabase { db, _ in
            #expect(try db.appliedMigrations() == [])
            #expect(try db.migrate(Self.base.reversed()) == [1, 2])
            #expect(try db.migrate(Self.base) == [])
            #expect(try db.appliedMigrations() == [1, 2])
            let third = Migration(version: 3, name: "more", sql: "INSERT INTO counters (id, n) VALUES (2, 0)")
            #expect(try db.migrate(Self.base + [third]) == [3])
            let counters = try db.transaction { try $0.queryOne("SELECT COUNT(*) AS c FROM counters")?.int("c") }
            #expect(counters == 2)
        }
    }

    @Test("a database migrated by a newer build is refused, and nothing is applied to it", arguments: Backend.all)
    func newerSchema(backend: Backend) throws {
        try backend.withFreshDatabase { db, _ throws in
            let third = Migration(version: 3, name: "newer", sql: "CREATE TABLE newer (x {{bigint}})")
            #expect(try db.migrate(Self.base + [third]) == [1, 2, 3])
            #expect(
                storeErrorKind { try db.migrate(Self.base) } == .migration, "a build that knows versions 1 and 2 only")
            #expect(try db.appliedMigrations() == [1, 2, 3])
            #expect(try db.migrate(Self.base + [third]) == [], "the build that knows version 3 still starts")
        }
    }

    @Test(
        "a failing migration is rolled back, reported as migration, and later ones do not run", arguments: Backend.all)
    func failingMigration(backend: Backend) throws {
        try backend.withFreshDatabase { db, _ in
            let bad = [
                Migration(version: 1, name: "ok", sql: "CREATE TABLE a (x {{bigint}})"),
                Migration(
                    version: 2, name: "bad", sql: "CREATE TABLE b (y {{bigint}}); INSERT INTO nowhere VALUES (1)"),
                Migration(version: 3, name: "after", sql: "CREATE TABLE c (z {{bigint}})"),
            ]
            #expect(storeErrorKind { try db.migrate(bad) } == .migration)
            let applied = try db.appliedMigrations()
            #expect(applied == [1])
            let missing = storeErrorKind { try db.transaction { try $0.query("SELECT * FROM b") } }
            #expect(missing == .query)
            let dup = [
                Migration(version: 4, name: "x", sql: "SELECT 1"), Migration(version: 4, name: "y", sql: "SELECT 1"),
            ]
            #expect(storeErrorKind { try db.migrate(dup) } == .migration)
        }
    }

    @Test("placeholders $1…$n bind by number, reused and out of order", arguments: Backend.all)
    func placeholders(backend: Backend) throws {
        try backend.withFreshDatabase { db, _ in
            try db.migrate([Migration(version: 1, name: "p", sql: "CREATE TABLE p (a TEXT, b {{bigint}}, c TEXT)")])
            let rows = try db.transaction { conn in
                #expect(try conn.execute("INSERT INTO p (a, b, c) VALUES ($2, $1, $2)", [5, "x"]) == 1)
                try conn.execute("INSERT INTO p (a, b, c) VALUES ($3, $1, $2)", [7, "y", "z"])
                return try conn.query("SELECT a, b, c FROM p WHERE (a = $2 AND c = $2) OR b > $1 ORDER BY b", [6, "x"])
            }
            #expect(rows.count == 2)
            #expect(try rows.map { try $0.text("a") } == ["x", "z"])
            #expect(try rows.map { try $0.int("b") } == [5, 7])
            #expect(try rows.map { try $0.text("c") } == ["x", "y"])
        }
    }

    @Test("a transaction that throws is rolled back and leaves nothing", arguments: Backend.all)
    func rollback(backend: Backend) throws {
        struct Boom: Error {}
        try backend.withFreshDatabase { db, _ in
            try db.migrate(Self.base)
            #expect(throws: Boom.self) {
                try db.transaction { conn in
                    try conn.execute("INSERT INTO items (name) VALUES ($1)", ["ghost"])
                    try conn.execute("UPDATE counters SET n = 99 WHERE id = 1")
                    throw Boom()
                }
            }
            let (items, n) = try db.transaction { conn in
                (
                    try conn.queryOne("SELECT COUNT(*) AS c FROM items")?.int("c"),
                    try conn.queryOne("SELECT n FROM counters")?.int("n")
                )
            }
            #expect(items == 0)
            #expect(n == 0)
        }
    }

    @Test("a duplicate key is reported as uniqueViolation", arguments: Backend.all)
    func uniqueViolation(backend: Backend) throws {
        try backend.withFreshDatabase { db, _ in
            try db.migrate(Self.base)
            try db.transaction { try $0.execute("INSERT INTO items (name) VALUES ($1)", ["dup"]) }
            #expect(
                storeErrorKind {
                    try db.transaction { try $0.execute("INSERT INTO items (name) VALUES ($1)", ["dup"]) }
                } == .uniqueViolation)
            #expect(
                storeErrorKind {
                    try db.transaction { try $0.execute("INSERT INTO counters (id, n) VALUES (1, 5)") }
                } == .uniqueViolation)
        }
    }

    @Test("RETURNING gives back the generated id and the row", arguments: Backend.all)
    func returning(backend: Backend) throws {
        try backend.withFreshDatabase { db, _ in
            try db.migrate(Self.base)
            let (first, second) = try db.transaction { conn in
                (
                    try conn.queryOne(
                        "INSERT INTO items (name, score) VALUES ($1, $2) RETURNING id, name, score", ["a", 1.5]),
                    try conn.queryOne("INSERT INTO items (name) VALUES ($1) RETURNING id", ["b"])
                )
            }
            let firstID = try #require(try first?.int("id"))
            let secondID = try #require(try second?.int("id"))
            #expect(secondID > firstID)
            #expect(try first?.text("name") == "a")
            #expect(try first?.double("score") == 1.5)
        }
    }

    @Test("an atomic counter hit from 8 threads × 50 times reaches 400 with distinct values", arguments: Backend.all)
    func atomicCounter(backend: Backend) throws {
        try backend.withFreshDatabase { db, _ in
            try db.migrate(Self.base)
            let seen = Mutex<[Int64]>([])
            let failures = Mutex<[String]>([])
            runThreads(8) { _ in
                for _ in 0..<50 {
                    do {
                        let n = try db.transaction { conn in
                            try conn.queryOne("UPDATE counters SET n = n + 1 WHERE id = $1 RETURNING n", [1])?.int("n")
                        }
                        if let n { seen.withLock { $0.append(n) } }
                    } catch {
                        failures.withLock { $0.append(String(reflecting: error)) }
                    }
                }
            }
            #expect(failures.withLock { $0 } == [])
            let values = seen.withLock { $0 }
            #expect(values.count == 400)
            #expect(Set(values) == Set(1...400))
            #expect(try db.transaction { try $0.queryOne("SELECT n FROM counters WHERE id = 1")?.int("n") } == 400)
        }
    }

    @Test("an upsert inserts once, then increments and returns the count", arguments: Backend.all)
    func upsert(backend: Backend) throws {
        try backend.withFreshDatabase { db, _ in
            try db.migrate([
                Migration(version: 1, name: "t", sql: "CREATE TABLE t (key TEXT PRIMARY KEY, n {{bigint}} NOT NULL)")
            ])
            let sql = "INSERT INTO t (key, n) VALUES ($1, 1) ON CONFLICT(key) DO UPDATE SET n = t.n + 1 RETURNING n"
            let counts = try db.transaction { conn in
                try ["a", "a", "b", "a"].map { try conn.queryOne(sql, [SQLValue($0)])?.int("n") }
            }
            #expect(counts == [1, 2, 1, 3])
        }
    }

    @Test("NULLs, extreme integers, doubles, booleans and unicode text round-trip", arguments: Backend.all)
    func roundTrip(backend: Backend) throws {
        try backend.withFreshDatabase { db, _ in
            try db.migrate([
                Migration(version: 1, name: "v", sql: "CREATE TABLE v (i {{bigint}}, d {{real}}, s TEXT, f {{bigint}})")
            ])
            let cases: [(SQLValue, SQLValue, SQLValue)] = [
                (.null, .null, .null), (.int(.min), -0.25, "héllo ✓ 🔐 ☃"), (.int(.max), 1e300, ""),
                (-42, 3.141592653589793, "a'b\"c;--"),
            ]
            let rows = try db.transaction { conn in
                for (index, (i, d, s)) in cases.enumerated() {
                    try conn.execute("INSERT INTO v (i, d, s, f) VALUES ($1, $2, $3, $4)", [i, d, s, SQLValue(index)])
                }
                return try conn.query("SELECT i, d, s, f FROM v ORDER BY f")
            }
            #expect(rows.map { [$0["i"], $0["d"], $0["s"]] } == cases.map { [$0.0, $0.1, $0.2] })
            #expect(try rows[0].optionalInt("i") == nil && rows[0].optionalText("s") == nil)
            #expect(storeErrorKind { _ = try rows[0].int("i") } == .decoding)
            let flags = try db.transaction {
                try $0.queryOne("SELECT (1 = 1) AS yes, (1 = 2) AS no, $1 AS flag", [SQLValue(true)])
            }
            #expect(try flags?.bool("yes") == true)
            #expect(try flags?.bool("no") == false)
            #expect(try flags?.bool("flag") == true)
        }
    }

    @Test("a second Database on the same URL sees committed data", arguments: Backend.all)
    func secondDatabase(backend: Backend) throws {
        try backend.withFreshDatabase { db, url in
            try db.migrate(Self.base)
            try db.transaction { try $0.execute("UPDATE counters SET n = 7 WHERE id = 1") }
            let other = try openDatabase(url: url, poolSize: 2)
            defer { other.close() }
            #expect(try other.appliedMigrations() == [1, 2])
            #expect(try other.transaction { try $0.queryOne("SELECT n FROM counters")?.int("n") } == 7)
            try other.transaction { try $0.execute("UPDATE counters SET n = 8 WHERE id = 1") }
            #expect(try db.transaction { try $0.queryOne("SELECT n FROM counters")?.int("n") } == 8)
        }
    }

    @Test("a failed query's description hides the SQL text; its debugDescription shows it", arguments: Backend.all)
    func errorDescriptions(backend: Backend) throws {
        try backend.withFreshDatabase { db, _ in
            let sql = "SELECT secret_column FROM no_such_table_xyz"
            do {
                _ = try db.transaction { try $0.query(sql) }
                Issue.record("the query succeeded")
            } catch let error as StoreError {
                #expect(error.kind == .query)
                #expect(!error.description.contains("no_such_table_xyz"))
                #expect(error.debugDescription.contains(sql))
            }
        }
    }

    @Test("ping answers on an open database; a closed one is unavailable", arguments: Backend.all)
    func pingAndClose(backend: Backend) throws {
        try backend.withFreshDatabase { db, url in
            try db.ping()
            let other = try openDatabase(url: url, poolSize: 1)
            other.close()
            #expect(storeErrorKind { try other.ping() } == .unavailable)
        }
    }

    @Test("concurrent migrators apply each migration exactly once", arguments: Backend.all)
    func concurrentMigrations(backend: Backend) throws {
        try backend.withFreshDatabase { db, url in
            let applied = Mutex<[Int]>([])
            let failures = Mutex<[String]>([])
            runThreads(4) { _ in
                do {
                    let other = try openDatabase(url: url, poolSize: 1)
                    defer { other.close() }
                    let versions = try other.migrate(Self.base)
                    applied.withLock { $0 += versions }
                } catch {
                    failures.withLock { $0.append(String(reflecting: error)) }
                }
            }
            #expect(failures.withLock { $0 } == [])
            #expect(applied.withLock { $0.sorted() } == [1, 2])
            let recorded = try db.appliedMigrations()
            #expect(recorded == [1, 2])
        }
    }

    @Test(
        "a PostgreSQL connection killed by the server is replaced",
        arguments: Backend.all.filter { $0.dialect == .postgres })
    func killedConnection(backend: Backend) throws {
        try backend.withFreshDatabase(poolSize: 1) { db, url in
            let pid = try #require(try db.transaction { try $0.queryOne("SELECT pg_backend_pid() AS pid")?.int("pid") })
            let admin = try openDatabase(url: url, poolSize: 1)
            defer { admin.close() }
            let killed = try admin.transaction {
                try $0.queryOne("SELECT pg_terminate_backend($1) AS ok", [.int(pid)])?.bool("ok")
            }
            #expect(killed == true)
            Thread.sleep(forTimeInterval: 0.1)
            try db.ping()
            let newPID = try db.transaction { try $0.queryOne("SELECT pg_backend_pid() AS pid")?.int("pid") }
            #expect(newPID != pid)
        }
    }
}
