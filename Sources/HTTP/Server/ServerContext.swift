import API
internal import CMicroHTTPD
import Foundation
import Logging
import Metrics
import Synchronization

/// What the C callbacks reach through their `cls` pointer: the routes, the
/// worker pool, the logger and the in-flight count. Immutable but for atomics
/// and the pool's own locking, hence `Sendable`.
final class ServerContext: Sendable {
    let configuration: HTTPServerConfiguration
    let router: Router
    let logger: Logger
    /// Password hashing (Argon2id): kept apart so that it never waits behind database work.
    let workers: WorkerPool
    /// Handlers that use the database (the default), with the connection suspended meanwhile.
    let databaseWorkers: WorkerPool
    /// Re-runs of long polls woken by a notification.
    let longPollWorkers: WorkerPool
    let hub: LongPollHub
    /// The `Date` header, from the server's clock.
    let date: DateHeader
    /// Head and body deadlines of the open connections.
    let connections: ConnectionGuard
    let inFlight = Atomic<Int>(0)
    /// Set when stopping: answers then carry `Connection: close`.
    let draining = Atomic<Bool>(false)
    private let counter = Atomic<UInt64>(0)
    private let prefix: String

    init(
        configuration: HTTPServerConfiguration, router: Router, logger: Logger, hub: LongPollHub,
        now: @escaping @Sendable () -> Date
    ) {
        date = DateHeader(now: now)
        self.hub = hub
        self.configuration = configuration
        self.router = router
        self.logger = logger
        connections = ConnectionGuard(
            headerTimeout: configuration.headerTimeout, bodyTimeout: configuration.bodyTimeout, logger: logger)
        workers = WorkerPool(
            name: "hashing", threads: max(1, configuration.workerThreads),
            capacity: max(1, configuration.workerQueueLimit), niceness: 5)
        databaseWorkers = WorkerPool(
            name: "database", threads: max(1, configuration.databaseThreads),
            capacity: max(1, configuration.databaseQueueLimit), niceness: 0)
        longPollWorkers = WorkerPool(
            name: "long-poll", threads: max(1, configuration.longPollThreads), capacity: 4096, niceness: 0)
        let pool = longPollWorkers
        hub.attach { pool.submit($0) }
        let stats = router.stats
        Metrics.shared.custom("trifactor_http_requests_total") { RouteStats.render(stats, into: &$0) }
        // A per-process random prefix keeps ids unique across restarts and instances.
        prefix = String(UInt32.random(in: 0...UInt32.max), radix: 36)
    }

    /// A new request id: `<process prefix>-<sequence>`.
    func nextRequestID() -> String {
        "\(prefix)-\(counter.add(1, ordering: .relaxed).newValue)"
    }

    /// Logs an ended request (with the caller's trace, when it sent one) and counts it.
    func completed(
        id: String, method: String, path: String, status: Int, stats: RouteStats?, started: ContinuousClock.Instant,
        traceParent: String?, aborted: Bool
    ) {
        let elapsed = ContinuousClock.now - started
        let millis = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        let trace = TraceParent.parse(traceParent)
        logger.request(
            id: id, method: method, path: path, status: status, durationMillis: (millis * 1000).rounded() / 1000,
            aborted: aborted,
            trace: trace.map { ($0.traceID, $0.parentID) })
        observe(stats, method: method, path: path, status: status, seconds: millis / 1000)
    }

    /// Counts one answered request under the route `dispatch` found for it
    /// (`unmatched` for a path or method no route has, so scanners cannot add
    /// series). Only an answer refused before routing (413, a framing error)
    /// is matched here.
    private func observe(_ answer: RouteStats?, method: String, path: String, status: Int, seconds: Double) {
        if let answer { return answer.record(status: status, seconds: seconds) }
        if case .found(let route, _) = router.match(method: method, path: path) {
            route.stats.record(status: status, seconds: seconds)
        } else {
            router.unmatched.record(status: status, seconds: seconds)
        }
    }

    /// The pool a route's handler runs on.
    func executor(for execution: Router.Execution) -> WorkerPool {
        execution == .hashing ? workers : databaseWorkers
    }

    /// Routes `request` and runs its handler where the route says: inline
    /// or on the fast path (on the calling thread), else on its executor,
    /// parking long polls in the hub. Returns the answer when it is ready at
    /// once; otherwise calls `suspend` before anything can call `deliver`,
    /// and `deliver` later, from another thread, with the answer. Every
    /// answer has been through `finish`. One path for libmicrohttpd's
    /// connections and for in-process requests.
    func dispatch(_ incoming: Request, suspend: () -> Void, deliver: @escaping @Sendable (Response) -> Void)
        -> Response?
    {
        var request = forwarded(incoming)
        switch router.match(method: request.method, path: request.path) {
        case .notFound:
            return finish(
                Response.problem(
                    HTTPProblem.notFound.problem(requestID: request.id), headers: HTTPProblem.notFound.headers),
                requestID: request.id,
                stats: router.unmatched)
        case .methodNotAllowed(let allowed):
            let problem = HTTPProblem.methodNotAllowed(allowed: allowed)
            return finish(
                Response.problem(problem.problem(requestID: request.id), headers: problem.headers),
                requestID: request.id, stats: router.unmatched)
        case .found(let route, let parameters):
            request.parameters = parameters
            let id = request.id
            let park: @Sendable (Deferral, Request) -> Void = { [self] deferral, request in
                hub.add(
                    key: deferral.key, timeout: deferral.timeout, request: request,
                    handler: { [self] in respond($0, handler: route.handler) },
                    onTimeout: deferral.onTimeout
                ) { [self] response in deliver(finish(response, requestID: id, stats: route.stats)) }
            }
            if route.execution == .inline || route.fast != nil {
                let answer =
                    route.fast.map { fast in respondFast(request, fast) } ?? respond(request, handler: route.handler)
                if let answer, answer.deferral == nil { return finish(answer, requestID: id, stats: route.stats) }
                // Suspend before anything can resume us: a long poll parks, a missed fast path goes on to its executor.
                suspend()
                if let deferral = answer?.deferral {
                    park(deferral, request)
                    return nil
                }
            } else {
                suspend()
            }
            let accepted = executor(for: route.execution).submit { [self, request] in
                let answer = respond(request, handler: route.handler)
                if let deferral = answer.deferral {
                    park(deferral, request)
                } else {
                    deliver(finish(answer, requestID: id, stats: route.stats))
                }
            }
            if !accepted {
                deliver(
                    finish(
                        Response.problem(
                            HTTPProblem.overloaded.problem(requestID: id), headers: HTTPProblem.overloaded.headers),
                        requestID: id,
                        stats: route.stats))
            }
            return nil
        }
    }

    /// The request as from the client a trusted proxy names; others' forwarding headers are dropped,
    /// and so is the relying party's brand (`X-Trifactor-Brand`), which only a trusted proxy may name,
    /// and only one of the configured `brands`.
    func forwarded(_ request: Request) -> Request {
        let proxies = configuration.trustedProxies
        var headers = request.headers
        headers["x-forwarded-for"] = nil
        headers["x-forwarded-user-agent"] = nil
        if let brand = headers["x-trifactor-brand"],
            !configuration.brands.contains(brand.trimmingCharacters(in: .whitespaces))
        {
            headers["x-trifactor-brand"] = nil
        }
        guard proxies.trusts(request.remoteAddress) else {
            headers["x-trifactor-brand"] = nil
            if headers.count == request.headers.count { return request }
            var stripped = Request(
                id: request.id, method: request.method, path: request.path, query: request.query, headers: headers,
                body: request.body,
                remoteAddress: request.remoteAddress)
            stripped.rawQuery = request.rawQuery
            stripped.received = (request.remoteAddress, request.header("x-forwarded-for"))
            return stripped
        }
        let client = proxies.client(
            peer: request.remoteAddress, forwardedFor: request.header("x-forwarded-for"),
            userAgent: request.header("user-agent"),
            forwardedUserAgent: request.header("x-forwarded-user-agent"))
        headers["user-agent"] = client.userAgent
        var forwarded = Request(
            id: request.id, method: request.method, path: request.path, query: request.query, headers: headers,
            body: request.body,
            remoteAddress: client.address)
        forwarded.rawQuery = request.rawQuery
        forwarded.received = (request.remoteAddress, request.header("x-forwarded-for"))
        return forwarded
    }

    /// Stores the final (finished) answer of a suspended request and resumes its connection.
    static func answer(_ finished: Response, state: RequestState, connection: ConnectionHandle) {
        state.state.withLock { $0.response = finished }
        MHD_resume_connection(connection.pointer)
    }

    /// Runs a route's fast path on the HTTP thread; nil sends the request on to the route's executor.
    func respondFast(_ request: Request, _ fast: Router.FastHandler) -> Response? {
        do {
            return try fast(request).map { checked($0, request) }
        } catch let error as any HTTPResponseError {
            return Response.problem(error.problem(requestID: request.id), headers: error.headers)
        } catch {
            return nil
        }
    }

    /// Runs the handler for `request` and turns every failure into problem+json.
    func respond(_ request: Request, handler: Router.Handler) -> Response {
        do {
            return checked(try handler(request), request)
        } catch let error as any HTTPResponseError {
            return Response.problem(error.problem(requestID: request.id), headers: error.headers)
        } catch {
            logger.log(
                .error, "unhandled_error",
                ["request_id": .string(request.id), "error": .string(String(reflecting: error))])
            return Response.problem(HTTPProblem.internalError.problem(requestID: request.id))
        }
    }

    /// `response`, or 500 internal_error (logged with its cause) when its body could not be encoded.
    func checked(_ response: Response, _ request: Request) -> Response {
        guard let failure = response.encodingFailure ?? response.deferral?.onTimeout.encodingFailure else {
            return response
        }
        logger.log(.error, "unhandled_error", ["request_id": .string(request.id), "error": .string(failure)])
        return Response.problem(HTTPProblem.internalError.problem(requestID: request.id))
    }

    /// Headers every answer carries.
    func finish(_ response: Response, requestID: String, stats: RouteStats? = nil) -> Response {
        var r = response
        r.routeStats = stats
        r.headers.reserveCapacity(r.headers.count + 8)
        r.headers.append(("X-Request-ID", requestID))
        r.headers.append(("Date", date.value))
        // A route that allows caching (a public key set, a discovery document) says so; every other answer is no-store.
        if r.header("Cache-Control") == nil { r.headers.append(("Cache-Control", "no-store")) }
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
