import API
import Core
import Crypto
import Foundation
import HTTP
import Metrics
import Store

/// `GET /metrics`: Prometheus' text format, behind the bearer token of
/// `TRIFACTOR_METRICS_TOKEN_FILE` (404 when none is set, 401 for a wrong
/// one). Counters and histograms are this process's; the outbox and
/// conversion gauges are read from the database, so they are the cluster's.
struct MetricsRoutes {
    let token: String?
    let transactions: Transactions
    let clock: Core.Clock

    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// Registers the gauges read at each scrape: the database's, and `server`'s connections and queues.
    func registerGauges(server: @escaping @Sendable () -> HTTPServer?) {
        ServerMetrics.register()
        let registry = Metrics.shared
        let transactions = transactions
        let clock = clock
        registry.gauge(
            "trifactor_outbox_messages", "Messages in the outbox (every instance's), by status, channel and provider.",
            labels: ["status", "channel", "provider"]
        ) {
            (try? transactions.read { db in
                try Outbox.counts(on: db).map { ([$0.status, $0.channel, $0.provider], Double($0.count)) }
            }) ?? []
        }
        registry.gauge(
            "trifactor_verifications_24h",
            "Phone verifications started and completed in the last 24 hours, by country calling code: the conversion the SMS-pumping guard watches (over its own window, 24 h by default).",
            labels: ["country", "stage"]
        ) {
            (try? transactions.read { db in
                try VerifyRepository.conversions(hours: 24, now: clock.now().millis, on: db).flatMap {
                    c -> [([String], Double)] in
                    [
                        ([String(c.country), "started"], Double(c.started)),
                        ([String(c.country), "completed"], Double(c.completed)),
                    ]
                }
            }) ?? []
        }
        registry.gauge("trifactor_http_connections_open", "HTTP connections open now, idle keep-alive ones included.") {
            server().map { [([], Double($0.openConnections))] } ?? []
        }
        registry.gauge("trifactor_http_requests_in_flight", "Requests begun and not yet answered.") {
            server().map { [([], Double($0.requestsInFlight))] } ?? []
        }
        registry.gauge(
            "trifactor_worker_queue_depth", "Jobs waiting for a worker, by pool (hashing is the Argon2id queue).",
            labels: ["pool"]
        ) {
            server()?.queuedJobs.map { ([$0.pool], Double($0.jobs)) } ?? []
        }
        registry.gauge("process_resident_memory_bytes", "Resident memory size in bytes.") {
            [([], ServerMetrics.residentBytes())]
        }
        registry.gauge("process_open_fds", "Open file descriptors.") { [([], ServerMetrics.openDescriptors())] }
    }

    func register(on router: inout Router) {
        let expected = token.map { SHA256.hash(Array($0.utf8)) }
        router.add("GET", "/metrics") { request in
            guard let expected else { throw HTTPProblem.notFound }
            guard let given = request.bearerToken, ConstantTime.equals(SHA256.hash(Array(given.utf8)), expected) else {
                throw APIError.unauthenticated
            }
            return Response(
                status: 200, headers: [("Content-Type", Self.contentType)], body: Array(Metrics.shared.render().utf8))
        }
    }
}
