import Metrics
import Synchronization

/// One route's answered requests by status and its latency histogram, kept
/// with the route so that counting a request costs a lock and two integer
/// updates (no label strings hashed on the hot path); written out as
/// `trifactor_http_requests_total` and `trifactor_http_request_duration_seconds`.
final class RouteStats: Sendable {
    struct Counts {
        var statuses: [Int: UInt64] = [:]
        var latency = Histogram.Series(buckets: Histogram.latencyBuckets)
    }

    let route: String
    let method: String
    private let counts = Mutex(Counts())

    init(route: String, method: String) {
        self.route = route
        self.method = method
    }

    func record(status: Int, seconds: Double) {
        counts.withLock { c in
            c.statuses[status, default: 0] += 1
            c.latency.record(seconds, buckets: Histogram.latencyBuckets)
        }
    }

    var snapshot: Counts { counts.withLock { $0 } }

    /// Writes both families for `all` routes (those with requests).
    static func render(_ all: [RouteStats], into text: inout String) {
        let seen = all.map { ($0, $0.snapshot) }.filter { !$0.1.latency.isEmpty }
        text +=
            "# HELP trifactor_http_requests_total HTTP requests answered, by route pattern, method and status (0: the client went away first).\n"
        text += "# TYPE trifactor_http_requests_total counter\n"
        for (stats, c) in seen {
            for (status, n) in c.statuses.sorted(by: { $0.key < $1.key }) {
                text +=
                    "trifactor_http_requests_total\(Metrics.labelText(["route", "method", "status"], [stats.route, stats.method, String(status)])) \(n)\n"
            }
        }
        text +=
            "# HELP trifactor_http_request_duration_seconds Time from the request's head to its answer, by route pattern and method.\n"
        text += "# TYPE trifactor_http_request_duration_seconds histogram\n"
        for (stats, c) in seen {
            Histogram.write(
                "trifactor_http_request_duration_seconds", labels: ["route", "method"],
                values: [stats.route, stats.method],
                series: c.latency, buckets: Histogram.latencyBuckets, into: &text)
        }
    }
}
