import Foundation
import Store
import Synchronization

/// Test numbers: numbers with a fixed code that never send, for app
/// developers' automated tests. Those of the configuration
/// (`TRIFACTOR_TEST_NUMBERS`) and those an administrator added through the
/// admin API (the `test_numbers` table), held in memory for the hot path and
/// read again from the database every few seconds and after each change made
/// here (another instance's change is seen within that time).
final class TestNumberBook: Sendable {
    let configured: [String: String]
    /// The configuration's and administrators' numbers, merged when read from the database (not per lookup).
    private let merged: Mutex<[String: String]>

    init(configured: [String: String]) {
        self.configured = configured
        merged = Mutex(configured)
    }

    /// Every test number and its code; the configuration's win.
    var all: [String: String] { merged.withLock { $0 } }

    /// Reads the administrators' numbers again.
    func refresh(on db: any SQLConnection) throws {
        var fresh: [String: String] = [:]
        for row in try db.query("SELECT number, code FROM test_numbers", []) {
            fresh[try row.text("number")] = try row.text("code")
        }
        let all = fresh.merging(configured) { _, configured in configured }
        merged.withLock { $0 = all }
    }

    /// One test number as the admin API lists it.
    struct Entry: Sendable {
        let number: String
        let code: String
        let source: String
        let createdAt: Int64?
    }

    /// Adds an administrator's test number, or changes its code.
    static func set(_ number: String, code: String, now: Int64, on db: any SQLConnection) throws {
        try db.execute(
            "INSERT INTO test_numbers (number, code, created_at) VALUES ($1, $2, $3) ON CONFLICT (number) DO UPDATE SET code = excluded.code",
            [.text(number), .text(code), .int(now)])
    }

    /// Removes an administrator's test number; false when there was none.
    static func remove(_ number: String, on db: any SQLConnection) throws -> Bool {
        try db.execute("DELETE FROM test_numbers WHERE number = $1", [.text(number)]) == 1
    }

    static func list(configured: [String: String], on db: any SQLConnection) throws -> [Entry] {
        var entries = try db.query("SELECT number, code, created_at FROM test_numbers ORDER BY number", []).compactMap {
            row -> Entry? in
            let number = try row.text("number")
            return configured[number] == nil
                ? Entry(
                    number: number, code: try row.text("code"), source: "admin", createdAt: try row.int("created_at"))
                : nil
        }
        entries += configured.map { Entry(number: $0.key, code: $0.value, source: "configuration", createdAt: nil) }
        return entries.sorted { $0.number < $1.number }
    }
}
