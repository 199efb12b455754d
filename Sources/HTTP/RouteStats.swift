import Metrics
import Synchronization

/// One route's answered requests by status and its latency histogram, kept
/// with the route so that counting a request costs a lock and two integer
/// updates (no label strings hashed on the hot path); written out as
/// `trifactor_http_requests_total` and `trifactor_http_request_duration_seconds`.
final class RouteStats: Sendable {
    struct Counts {
        var statuses: [Int: UInt64] = [:]
        var buckets: [UInt64] = Array(repeating: 0, count: Histogram.latencyBuckets.count + 1)
        var sum = 0.0
        var count: UInt64 = 0
    }

    let route: String
    let method: String
    private let counts = Mutex(Counts())

    init(route: String, method: String) {
        self.route = route
        self.method = method
    }

    func record(status: Int, seconds: Double) {
        let bucket = Histogram.latencyBuckets.firstIndex { seconds <= $0 } ?? Histogram.latencyBuckets.count
        counts.withLock { c in
            c.statuses[status, default: 0] += 1
            c.buckets[bucket] += 1
            c.sum += seconds
            c.count += 1
        }
    }

    var snapshot: Counts { counts.withLock { $0 } }

    /// Writes both families for `all` routes (those with requests).
    static func render(_ all: [RouteStats], into text: inout String) {
        let seen = all.map { ($0, $0.snapshot) }.filter { $0.1.count > 0 }
        text += "# HELP trifactor_http_requests_total HTTP requests answered, by route pattern, method and status (0: the client went away first).\n"
        text += "# TYPE trifactor_http_requests_total counter\n"
        for (stats, c) in seen {
            for (status, n) in c.statuses.sorted(by: { $0.key < $1.key }) {
                text += "trifactor_http_requests_total\(Metrics.labelText(["route", "method", "status"], [stats.route, stats.method, String(status)])) \(n)\n"
            }
        }
        text += "# HELP trifactor_http_request_duration_seconds Time from the request's head to its answer, by route pattern and method.\n"
        text += "# TYPE trifactor_http_request_duration_seconds histogram\n"
        for (stats, c) in seen {
            let labels = (["route", "method"], [stats.route, stats.method])
            var cumulative: UInt64 = 0
            for (bound, n) in zip(Histogram.latencyBuckets, c.buckets) {
                cumulative += n
                text += "trifactor_http_request_duration_seconds_bucket\(Metrics.labelText(labels.0, labels.1, extra: ("le", Metrics.format(bound)))) \(cumulative)\n"
            }
            text += "trifactor_http_request_duration_seconds_bucket\(Metrics.labelText(labels.0, labels.1, extra: ("le", "+Inf"))) \(c.count)\n"
            text += "trifactor_http_request_duration_seconds_sum\(Metrics.labelText(labels.0, labels.1)) \(Metrics.format(c.sum))\n"
            text += "trifactor_http_request_duration_seconds_count\(Metrics.labelText(labels.0, labels.1)) \(c.count)\n"
        }
    }
}
