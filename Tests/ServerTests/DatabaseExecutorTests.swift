import Foundation
import ServerTestSupport
import Store
import Synchronization
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

/// Handlers that use the database run on an executor of their own, so a
/// database that makes them wait never holds an HTTP thread.
@Suite("Database executor")
struct DatabaseExecutorTests {
    @Test(
        "while the write lock is held from outside, /health and /ready answer at once and the 16 waiting requests finish once it is released",
        arguments: Backend.all)
    func lockHeldOutside(backend: Backend) throws {
        try backend.withFreshDatabase { database, url in
            let server = try TestServer(database: database)
            let outside = try openDatabase(url: url, poolSize: 1)
            defer { outside.close() }
            let holding = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            Thread {
                try? outside.transaction { db in
                    if database.dialect == .postgres {
                        try db.execute("LOCK TABLE rate_limits IN ACCESS EXCLUSIVE MODE")
                    } else {
                        try db.execute(
                            "INSERT INTO rate_limits (key, tokens, updated_at, granted) VALUES ('held', 1, 0, 1)")
                    }
                    holding.signal()
                    release.wait()
                }
            }.start()
            holding.wait()

            let answers = Mutex<[(status: Int, retryAfter: String?)]>([])
            let group = DispatchGroup()
            let port = server.port
            for index in 0..<16 {
                group.enter()
                Thread {
                    let response = try? HTTPTestClient(port: port).json(
                        "POST", "/v1/accounts/verify-email/resend", ["email": "user\(index)@example.com"])
                    answers.withLock { $0.append((response?.status ?? 0, response?.header("retry-after"))) }
                    group.leave()
                }.start()
            }
            usleep(300_000)  // every database thread is now waiting on the lock, the rest queued
            for path in ["/health", "/ready", "/health", "/ready"] {
                let started = ContinuousClock.now
                let response = try server.get(path)
                #expect(response.status == 200, "\(path)")
                #expect(
                    ContinuousClock.now - started < .milliseconds(100), "\(path) took \(ContinuousClock.now - started)")
            }
            #expect(answers.withLock { $0.isEmpty })
            release.signal()
            group.wait()
            let all = answers.withLock { $0 }
            #expect(all.count == 16)
            #expect(
                all.allSatisfy { $0.status == 202 || ($0.status == 503 && $0.retryAfter != nil) },
                "\(all.map(\.status))")
            #expect(all.filter { $0.status == 202 }.count == 16)
        }
    }
}
