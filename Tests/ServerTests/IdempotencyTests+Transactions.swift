import API
import Core
import Foundation
import HTTP
import Logging
import ServerTestSupport
import Store
import Synchronization
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

extension IdempotencyTests {
    @Test(
        "what a keyed request leaves: a 2xx its effects and answer, a refusal its effects alone, a fault or a 5xx nothing",
        arguments: Backend.all)
    func outcomes(backend: Backend) throws {
        try backend.withFreshDatabase { database, _ in
            try database.migrate(Schema.migrations)
            try database.transaction { try $0.execute("CREATE TABLE effects (name TEXT NOT NULL)") }
            let transactions = Transactions(database: database, logger: Logger { _ in })
            let idempotency = Idempotency(transactions: transactions, clock: .system)
            struct Fault: Error {}
            func request(_ key: String) -> Request {
                Request(
                    id: "r", method: "POST", path: "/x", headers: ["idempotency-key": key],
                    body: Array(#"{"a":1}"#.utf8))
            }
            func run(_ key: String, _ handler: () throws -> Response) throws -> Response {
                try idempotency.run(request(key), operation: "POST /x", caller: "anonymous", answer: { $0 }, handler)
            }
            func effect(_ name: String) throws {
                try transactions.write { try $0.execute("INSERT INTO effects (name) VALUES ($1)", [.text(name)]) }
            }
            func effects() throws -> [String] {
                try database.read { try $0.query("SELECT name FROM effects ORDER BY name").map { try $0.text("name") } }
            }
            func keys() throws -> Int64 {
                try database.read { try $0.queryOne("SELECT COUNT(*) AS n FROM idempotency_keys")?.int("n") ?? -1 }
            }

            #expect(throws: Fault.self) {
                try run("fault") {
                    try effect("fault")
                    throw Fault()
                }
            }
            #expect(
                try run("server-error") {
                    try effect("server-error")
                    return Response(status: 500)
                }.status == 500)
            #expect(throws: HTTPProblem.self) {
                try run("refused") {
                    try effect("refused")
                    throw HTTPProblem(status: 409, code: "c", title: "t", detail: "d")
                }
            }
            #expect(
                try run("done") {
                    try effect("done")
                    return Response(
                        status: 201, headers: [("Content-Type", "application/json")], body: Array("{}".utf8))
                }.status == 201)
            #expect(try effects() == ["done", "refused"])
            #expect(try keys() == 1)
            var ran = false
            let replay = try run("done") {
                ran = true
                return Response(status: 204)
            }
            #expect(
                !ran && replay.status == 201 && replay.body == Array("{}".utf8)
                    && replay.header("content-type") == "application/json")
            // The keys that kept nothing are free: their requests run again.
            #expect(
                try run("fault") {
                    try effect("fault")
                    return Response(status: 201)
                }.header("idempotent-replayed") == nil)
            #expect(try effects() == ["done", "fault", "refused"])
        }
    }

    @Test("inside a request's transaction, writes are savepoints and news waits for the commit", arguments: Backend.all)
    func requestTransaction(backend: Backend) throws {
        try backend.withFreshDatabase { database, _ in
            try database.transaction { try $0.execute("CREATE TABLE steps (name TEXT NOT NULL)") }
            let transactions = Transactions(database: database, logger: Logger { _ in })
            let heard = Mutex<[String]>([])
            let feed = ChangeFeed.live(
                local: { key in heard.withLock { $0.append(key) } }, database: database, logger: Logger { _ in })
            struct Refused: Error {}

            try transactions.request { _ in
                try transactions.write { try $0.execute("INSERT INTO steps (name) VALUES ('kept')") }
                #expect(throws: Refused.self) {
                    try transactions.write { db in
                        try db.execute("INSERT INTO steps (name) VALUES ('undone')")
                        feed.publish("user:undone")  // news of a write that is undone is never heard
                        throw Refused()
                    }
                }
                // A read sees the request's own writes.
                #expect(
                    try transactions.read { try $0.query("SELECT name FROM steps").map { try $0.text("name") } } == [
                        "kept"
                    ])
                feed.publish("user:1")
                #expect(heard.withLock { $0 }.isEmpty)
            }
            #expect(heard.withLock { $0 } == ["user:1"])

            #expect(throws: Refused.self) {
                try transactions.request { _ in
                    try transactions.write { try $0.execute("INSERT INTO steps (name) VALUES ('rolled back')") }
                    feed.publish("user:2")
                    throw Refused()
                }
            }
            #expect(heard.withLock { $0 } == ["user:1"])
            #expect(
                try database.read { try $0.query("SELECT name FROM steps").map { try $0.text("name") } } == ["kept"])
        }
    }
}
