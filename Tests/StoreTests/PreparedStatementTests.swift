import Store
import Testing
import TrifactorTestSupport

/// Connections keep their statements prepared (SQLite and PostgreSQL alike): what that must not
/// change. One connection per database, so every statement meets the ones run before it.
@Suite("Prepared statements")
struct PreparedStatementTests {
    static let items = Migration(
        version: 1, name: "items", sql: "CREATE TABLE items (id {{bigint}} PRIMARY KEY, name TEXT NOT NULL)")

    @Test(
        "a statement first run in a transaction that rolled back runs again on the same connection",
        arguments: Backend.all)
    func afterRollback(backend: Backend) throws {
        struct Boom: Error {}
        try backend.withFreshDatabase(poolSize: 1) { db, _ in
            try db.migrate([Self.items])
            #expect(throws: Boom.self) {
                try db.transaction { conn in
                    try conn.execute("INSERT INTO items (id, name) VALUES ($1, $2)", [1, "ghost"])
                    throw Boom()
                }
            }
            try db.transaction { try $0.execute("INSERT INTO items (id, name) VALUES ($1, $2)", [2, "kept"]) }
            let names = try db.read { try $0.query("SELECT name FROM items ORDER BY id").map { try $0.text("name") } }
            #expect(names == ["kept"])
        }
    }

    @Test("more distinct statements than a connection keeps all run, and the first again after", arguments: Backend.all)
    func beyondTheCache(backend: Backend) throws {
        try backend.withFreshDatabase(poolSize: 1) { db, _ in
            let sums = try db.read { conn in
                try (0..<300).map { n in try conn.queryOne("SELECT $1 + \(n) AS v", [1])?.int("v") }
            }
            #expect(sums == (0..<300).map { Int64($0 + 1) })
            #expect(try db.read { try $0.queryOne("SELECT $1 + 0 AS v", [5])?.int("v") } == 5)
        }
    }

    @Test(
        "a statement run before a migration changed its table runs after it, with the new columns",
        arguments: Backend.all)
    func acrossMigrations(backend: Backend) throws {
        try backend.withFreshDatabase(poolSize: 1) { db, _ in
            try db.migrate([Self.items])
            try db.transaction { try $0.execute("INSERT INTO items (id, name) VALUES ($1, $2)", [1, "a"]) }
            let before = try db.read { try $0.queryOne("SELECT * FROM items WHERE id = $1", [1]) }
            #expect(try before?.text("name") == "a")
            try db.migrate([
                Self.items, Migration(version: 2, name: "note", sql: "ALTER TABLE items ADD COLUMN note TEXT"),
            ])
            try db.transaction { try $0.execute("UPDATE items SET note = $2 WHERE id = $1", [1, "n"]) }
            let after = try db.read { try $0.queryOne("SELECT * FROM items WHERE id = $1", [1]) }
            #expect(try after?.text("note") == "n")
        }
    }
}
