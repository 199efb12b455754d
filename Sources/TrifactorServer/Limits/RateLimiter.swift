import Foundation
import Store

/// Token buckets kept in the database, so that every instance behind a load
/// balancer draws from the same bucket. One statement takes a token
/// atomically (an upsert that refills and spends in place), never a
/// read-modify-write in Swift.
struct RateLimiter {
    /// A bucket's shape: `burst` tokens at most, refilled at `rate` per second.
    struct Limit: Sendable {
        let burst: Double
        let rate: Double
    }

    /// One upsert that refills and spends in place. $2 and $5 are both now:
    /// PostgreSQL deduces one type per parameter. refill = min(burst, tokens
    /// + elapsed seconds × rate), written with CASE so both dialects agree;
    /// elapsed is never below zero (instances' clocks differ).
    private static let sql: String = {
        // Elapsed time never counts below zero: an instance whose clock is behind the one that
        // last touched the bucket must not drain it (rate × skew tokens), and the stamp never moves back.
        let elapsed =
            "(CASE WHEN CAST($5 AS DOUBLE PRECISION) > rate_limits.updated_at THEN CAST($5 AS DOUBLE PRECISION) - rate_limits.updated_at ELSE 0 END)"
        let refill =
            "CASE WHEN rate_limits.tokens + \(elapsed) / 1000.0 * CAST($4 AS DOUBLE PRECISION) > CAST($3 AS DOUBLE PRECISION) THEN CAST($3 AS DOUBLE PRECISION) ELSE rate_limits.tokens + \(elapsed) / 1000.0 * CAST($4 AS DOUBLE PRECISION) END"
        return """
            INSERT INTO rate_limits (key, tokens, updated_at, granted) VALUES ($1, CAST($3 AS DOUBLE PRECISION) - 1, $2, 1)
            ON CONFLICT (key) DO UPDATE SET
              tokens = CASE WHEN \(refill) >= 1 THEN \(refill) - 1 ELSE \(refill) END,
              granted = CASE WHEN \(refill) >= 1 THEN 1 ELSE 0 END,
              updated_at = CASE WHEN $2 > rate_limits.updated_at THEN $2 ELSE rate_limits.updated_at END
            RETURNING tokens, granted
            """
    }()

    /// Drops the bucket `key` (its key names a person: a number, an address).
    static func forget(_ key: String, on db: any SQLConnection) throws {
        try db.execute("DELETE FROM rate_limits WHERE key = $1", [.text(key)])
    }

    /// Takes one token from the bucket `key`. Returns nil when granted, or the
    /// whole seconds to wait before a token is available.
    static func take(_ key: String, limit: Limit, nowMillis: Int64, on db: any SQLConnection) throws -> Int? {
        guard
            let row = try db.queryOne(
                sql,
                [.text(key), .int(nowMillis), .double(limit.burst), .double(limit.rate), .double(Double(nowMillis))])
        else {
            return nil
        }
        if try row.int("granted") == 1 { return nil }
        let missing = 1 - (try row.double("tokens"))
        return max(1, Int((missing / limit.rate).rounded(.up)))
    }
}
