import Foundation
import Synchronization

/// How often one client address may post the sign-in form: a token bucket
/// per address (`perMinute` refilled, `burst` at most), in memory. The
/// table holds at most `capacity` addresses, dropping the oldest first
/// (O(1) per request); `sweep(now:)` forgets the buckets that are full again.
///
/// - Important: the address is the connection's peer. Behind a reverse
///   proxy every customer would share the proxy's bucket.
final class SignInLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: Date
    }

    private let buckets: Mutex<CappedTable<Bucket>>
    let perSecond: Double
    let burst: Double

    init(perMinute: Double = 10, burst: Double = 20, capacity: Int = 10_000) {
        precondition(perMinute > 0 && burst >= 1)
        perSecond = perMinute / 60
        self.burst = burst
        buckets = Mutex(CappedTable(capacity: capacity))
    }

    /// Takes one sign-in for `address` at `now`: nil when allowed, else the seconds until the next one is.
    func take(_ address: String, now: Date) -> TimeInterval? {
        buckets.withLock { all in
            guard var bucket = all[address] else {
                all.insert(address, Bucket(tokens: burst - 1, updated: now), capped: true)
                return nil
            }
            bucket.tokens = refilled(bucket, now: now)
            bucket.updated = now
            let allowed = bucket.tokens >= 1
            if allowed { bucket.tokens -= 1 }
            all.update(address, bucket)
            return allowed ? nil : (1 - bucket.tokens) / perSecond
        }
    }

    /// Forgets the buckets full again at `now` (they would allow a whole burst anyway); how many went.
    @discardableResult
    func sweep(now: Date) -> Int {
        buckets.withLock { all in all.removeAll { refilled($0, now: now) >= burst } }
    }

    private func refilled(_ bucket: Bucket, now: Date) -> Double {
        min(burst, bucket.tokens + max(0, now.timeIntervalSince(bucket.updated)) * perSecond)
    }
}
