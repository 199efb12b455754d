import API
import Foundation
import Synchronization

/// What the C callbacks reach through their `cls` pointer: the routes, the
/// worker pool, the logger and the in-flight count. Immutable but for atomics
/// and the pool's own locking, hence `Sendable`.
final class ServerContext: Sendable {
    let configuration: HTTPServerConfiguration
    let router: Router
    let logger: Logger
    let workers: WorkerPool
    let hub: LongPollHub
    /// Head and body deadlines of the open connections.
    let connections: ConnectionGuard
    let inFlight = Atomic<Int>(0)
    /// Set when stopping: answers then carry `Connection: close`.
    let draining = Atomic<Bool>(false)
    private let counter = Atomic<UInt64>(0)
    private let prefix: String

    init(configuration: HTTPServerConfiguration, router: Router, logger: Logger, hub: LongPollHub) {
        self.hub = hub
        self.configuration = configuration
        self.router = router
        self.logger = logger
        connections = ConnectionGuard(headerTimeout: configuration.headerTimeout, bodyTimeout: configuration.bodyTimeout, logger: logger)
        workers = WorkerPool(threads: max(1, configuration.workerThreads), capacity: max(1, configuration.workerQueueLimit), niceness: 5)
        let pool = workers
        hub.attach { pool.submit($0) }
        // A per-process random prefix keeps ids unique across restarts and instances.
        prefix = String(UInt32.random(in: 0...UInt32.max), radix: 36)
    }

    /// A new request id: `<process prefix>-<sequence>`.
    func nextRequestID() -> String {
        "\(prefix)-\(counter.add(1, ordering: .relaxed).newValue)"
    }

    /// Runs the handler for `request` and turns every failure into problem+json.
    func respond(_ request: Request, handler: Router.Handler) -> Response {
        do {
            return try handler(request)
        } catch let error as any HTTPResponseError {
            return Response.problem(error.problem(requestID: request.id), headers: error.headers)
        } catch {
            logger.log("error", "unhandled_error", ["request_id": .string(request.id), "error": .string(String(reflecting: error))])
            return Response.problem(HTTPProblem.internalError.problem(requestID: request.id))
        }
    }

    /// Headers every answer carries.
    func finish(_ response: Response, requestID: String) -> Response {
        var r = response
        r.headers.append(("X-Request-ID", requestID))
        r.headers.append(("Cache-Control", "no-store"))
        r.headers.append(("X-Content-Type-Options", "nosniff"))
        r.headers.append(("Referrer-Policy", "no-referrer"))
        r.headers.append(("X-Frame-Options", "DENY"))
        if draining.load(ordering: .acquiring) { r.headers.append(("Connection", "close")) }
        if r.header("Content-Security-Policy") == nil {
            r.headers.append(("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'"))
        }
        return r
    }
}
