import Store
import Testing
import TrifactorTestSupport

/// `Database.readStatement`: one `SELECT` as its own transaction, and nothing else.
@Suite("One-statement reads")
struct ReadStatementTests {
    static let items = Migration(
        version: 1, name: "items", sql: "CREATE TABLE items (id {{bigint}} PRIMARY KEY, name TEXT NOT NULL)")

    @Test("a one-statement read sees what was committed", arguments: Backend.all)
    func seesCommitted(backend: Backend) throws {
        try backend.withFreshDatabase { db, _ in
            try db.migrate([Self.items])
            try db.transaction { try $0.execute("INSERT INTO items (id, name) VALUES ($1, $2)", [1, "a"]) }
            let name = try db.readStatement {
                try $0.queryOne("SELECT name FROM items WHERE id = $1", [1])?.text("name")
            }
            #expect(name == "a")
        }
    }

    @Test(
        "a one-statement read refuses a write and a second statement, and the write changes nothing",
        arguments: Backend.all)
    func refusesMore(backend: Backend) throws {
        try backend.withFreshDatabase { db, _ in
            try db.migrate([Self.items])
            #expect(
                storeErrorKind {
                    try db.readStatement { try $0.execute("INSERT INTO items (id, name) VALUES ($1, $2)", [1, "x"]) }
                } == .query)
            #expect(
                storeErrorKind {
                    try db.readStatement { try $0.query("INSERT INTO items (id, name) VALUES (2, 'y') RETURNING id") }
                } == .query)
            #expect(
                storeErrorKind {
                    try db.readStatement { conn in
                        _ = try conn.query("SELECT COUNT(*) AS c FROM items")
                        return try conn.query("SELECT COUNT(*) AS c FROM items")
                    }
                } == .query)
            #expect(try db.read { try $0.queryOne("SELECT COUNT(*) AS c FROM items")?.int("c") } == 0)
        }
    }
}
