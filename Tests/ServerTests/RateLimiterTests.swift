import ServerTestSupport
import Store
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

@Suite("Rate limits in the database")
struct RateLimiterTests {
    @Test(
        "a bucket last touched by an instance whose clock is ahead is not drained by one behind", arguments: Backend.all
    )
    func skew(backend: Backend) throws {
        try backend.withServer { server throws in
            let limit = RateLimiter.Limit(burst: 10, rate: 1)
            let now = server.nowMillis
            func take(_ at: Int64) throws -> Int? {
                try server.database.transaction { try RateLimiter.take("skew", limit: limit, nowMillis: at, on: $0) }
            }
            #expect(try take(now + 20_000) == nil)  // the instance 20 s ahead
            // Behind by 20 s, elapsed would be -20 s: 20 tokens taken away. It is zero instead.
            for _ in 0..<9 { #expect(try take(now) == nil) }
            #expect(try take(now) != nil)  // the burst is spent, as it should be
            #expect(try take(now + 21_000) == nil)  // a second after the stamp: refilled
        }
    }
}
