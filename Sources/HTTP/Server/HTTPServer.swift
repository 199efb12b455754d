internal import CMicroHTTPD
internal import CMicroHTTPDShim
internal import CThreadShim
package import Foundation
package import Logging
import Synchronization

/// Settings of the HTTP listener.
package struct HTTPServerConfiguration: Sendable {
    /// IPv4 or IPv6 literal to bind.
    package var host: String
    /// Port; 0 picks a free one (read it back from `HTTPServer.port`).
    package var port: Int
    /// libmicrohttpd's internal epoll threads.
    package var httpThreads: Int
    /// Threads for password hashing (Argon2id).
    package var workerThreads: Int
    /// Hashing jobs that may wait for a thread before new ones get 503.
    package var workerQueueLimit: Int
    /// Threads that run handlers using the database (as many as the
    /// database pool has connections: more would only wait for one).
    package var databaseThreads: Int
    /// Requests that may wait for a database thread before new ones get 503.
    package var databaseQueueLimit: Int
    /// Threads that re-run woken long polls.
    package var longPollThreads: Int
    /// Largest accepted request body in bytes (413 above).
    package var maxBodyBytes: Int
    /// Most simultaneous connections.
    package var connectionLimit: Int
    /// Most simultaneous connections from one client address (0: no limit).
    /// Behind a reverse proxy every connection comes from the proxy: raise it
    /// above the proxy's own connection count, or set 0.
    package var connectionsPerIP: Int
    /// Seconds a connection may stay silent (libmicrohttpd's own timeout,
    /// which also bounds a client that stops reading an answer).
    package var connectionTimeout: Int
    /// Seconds a client has to send a request's head, counted from the
    /// connection's start or the previous answer on it (so also the longest
    /// idle keep-alive).
    package var headerTimeout: TimeInterval
    /// Seconds a client has to send a request's body once its head arrived.
    package var bodyTimeout: TimeInterval
    /// PEM certificate chain and private key: serve HTTPS when both are set.
    package var tlsCertificatePEM: String?
    package var tlsKeyPEM: String?
    /// Proxies whose `X-Forwarded-For` and `X-Forwarded-User-Agent` name the client (none by default).
    package var trustedProxies: TrustedProxies = .none
    /// The brands a trusted proxy may name in `X-Trifactor-Brand` (exactly; none by default). Any
    /// other brand, and every brand from anyone else, is dropped before a handler sees the request:
    /// a front proxy that passes its clients' headers on must not let them name the texts a server sends.
    package var brands: Set<String> = []
    /// Bytes of each connection's memory pool (see `HTTPServer.connectionMemory`).
    package var connectionMemory = HTTPServer.connectionMemory

    /// Defaults: 4 HTTP threads (more than cores: a thread may wait on the
    /// database), a worker per core, 64 queued jobs, 64 KiB bodies, 1,024
    /// connections of which 64 per client address, 10 s for a head, 30 s for
    /// a body or of silence.
    package init(
        host: String = "127.0.0.1", port: Int = 8080, httpThreads: Int = 4,
        workerThreads: Int = ProcessInfo.processInfo.activeProcessorCount, workerQueueLimit: Int = 64,
        databaseThreads: Int = 4, databaseQueueLimit: Int = 1024, longPollThreads: Int = 2,
        maxBodyBytes: Int = 64 * 1024, connectionLimit: Int = 1024, connectionsPerIP: Int = 64,
        connectionTimeout: Int = 30,
        headerTimeout: TimeInterval = 10, bodyTimeout: TimeInterval = 30
    ) {
        self.host = host
        self.port = port
        self.httpThreads = httpThreads
        self.workerThreads = workerThreads
        self.workerQueueLimit = workerQueueLimit
        self.databaseThreads = databaseThreads
        self.databaseQueueLimit = databaseQueueLimit
        self.longPollThreads = longPollThreads
        self.maxBodyBytes = maxBodyBytes
        self.connectionLimit = connectionLimit
        self.connectionsPerIP = connectionsPerIP
        self.connectionTimeout = connectionTimeout
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
    }

    /// Whether the server speaks TLS.
    package var usesTLS: Bool { tlsCertificatePEM != nil && tlsKeyPEM != nil }
}

/// Why the server could not start.
package struct HTTPServerError: Error, CustomStringConvertible, Sendable {
    package let description: String
}

/// An HTTP/1.1 server on libmicrohttpd: internal epoll thread pool, keep-alive,
/// bodies assembled and capped, slow routes on a worker pool with the
/// connection suspended meanwhile, every error as problem+json, one JSON log
/// line per request, and a graceful stop that finishes requests in flight.
package final class HTTPServer: Sendable {
    let context: ServerContext
    /// The daemon handle. `@unchecked Sendable`: it is only passed to
    /// libmicrohttpd calls that are thread-safe, and the mutex below makes
    /// stop take it exactly once.
    private struct DaemonHandle: @unchecked Sendable { let pointer: OpaquePointer }
    private let daemon = Mutex<DaemonHandle?>(nil)
    /// The PEM texts as C strings, alive as long as the daemon may read them.
    private let tls: TLSStrings

    /// A server for `router`; call `start()` to listen.
    /// - Parameter now: the server's clock, for the `Date` header (the time devices sign with).
    package init(
        configuration: HTTPServerConfiguration, router: Router, logger: Logger = .standardError,
        hub: LongPollHub = LongPollHub(),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        context = ServerContext(configuration: configuration, router: router, logger: logger, hub: hub, now: now)
        tls = TLSStrings(certificate: configuration.tlsCertificatePEM, key: configuration.tlsKeyPEM)
    }

    deinit { stop(drainTimeout: 0) }

    /// Binds and starts serving on background threads.
    /// - Throws: `HTTPServerError` when the address cannot be bound.
    package func start() throws {
        let cls = Unmanaged.passUnretained(context).toOpaque()
        let c = context.configuration
        guard let address = SocketAddress(literal: c.host, port: UInt16(clamping: c.port)) else {
            throw HTTPServerError(
                description: "Cannot listen on \(c.host):\(c.port): the listen address is not an IPv4 or IPv6 literal.")
        }
        var result = TRIFACTOR_MHD_STARTED
        let handle: OpaquePointer? = address.withSockaddr { sockaddr in
            var options = trifactor_mhd_options(
                address: sockaddr, thread_pool_size: UInt32(c.httpThreads),
                connection_limit: UInt32(c.connectionLimit), per_ip_connection_limit: UInt32(c.connectionsPerIP),
                connection_timeout_seconds: UInt32(c.connectionTimeout), connection_memory_limit: c.connectionMemory,
                access_handler: mhdAccessHandler, access_handler_cls: cls,
                completed_handler: mhdCompletedHandler, completed_handler_cls: cls,
                uri_log_handler: mhdURILog, uri_log_handler_cls: cls,
                notify_connection_handler: mhdNotifyConnection, notify_connection_handler_cls: cls,
                tls_cert_pem: tls.certificate, tls_key_pem: tls.key)
            return trifactor_mhd_start(&options, &result)
        }
        guard let handle else {
            let reason =
                switch (result, tls.certificate != nil) {
                case (TRIFACTOR_MHD_NO_TLS, _): "this libmicrohttpd was built without TLS support"
                case (_, true):
                    "the HTTPS listener could not start (address in use, or the certificate or key is not valid PEM)"
                case (_, false): "the HTTP listener could not start (address in use or not available)"
                }
            throw HTTPServerError(description: "Cannot listen on \(c.host):\(c.port): \(reason).")
        }
        daemon.withLock { $0 = DaemonHandle(pointer: handle) }
        context.connections.start()
    }

    /// Each connection's memory pool. libmicrohttpd zeroes it for every
    /// request, so every connection that served one holds all of it: 8 KiB
    /// keeps 10,000 idle keep-alive connections near 85 MB (32 KiB took 320
    /// MB). Half holds the read buffer, which grows into the rest, so a
    /// request head of about 6 KiB fits (a longer one gets 414 or 431, or
    /// the connection is closed); API clients and a proxy in front send far
    /// less. `--connection-memory-kib` raises it for heavy cookies.
    package static let connectionMemory = 8 * 1024

    /// The port actually bound (after asking for port 0).
    package var port: Int {
        daemon.withLock { d in d.map { Int(trifactor_mhd_bound_port($0.pointer)) } ?? 0 }
    }

    /// Connections open now (idle keep-alive ones included).
    package var openConnections: Int { context.connections.count }

    /// Jobs waiting for a worker, by pool (`hashing`: Argon2id; `database`).
    package var queuedJobs: [(pool: String, jobs: Int)] {
        [
            ("hashing", context.workers.queued), ("database", context.databaseWorkers.queued),
            ("long-poll", context.longPollWorkers.queued),
        ]
    }

    /// Whether the calling thread is one of libmicrohttpd's (where no
    /// handler may wait on the database).
    package static var isHTTPThread: Bool { trifactor_is_http_thread() != 0 }

    /// Answers a request without a socket, as a connection would: the same
    /// routing, executors, long-poll parking, problem mapping, headers and
    /// log line. Inline and fast-path handlers run on the calling thread,
    /// marked as an HTTP thread for that time (so the debug check against
    /// database work there holds); the call waits for the answer. For tests
    /// and tools; the server need not be listening.
    package func respond(
        method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:],
        body: [UInt8] = [],
        remoteAddress: String = "127.0.0.1", rawQuery: String = ""
    ) -> Response {
        let id = context.nextRequestID()
        let started = ContinuousClock.now
        context.inFlight.add(1, ordering: .releasing)
        defer {
            context.inFlight.subtract(1, ordering: .releasing)
        }
        var lowered: [String: String] = [:]
        for (name, value) in headers { lowered[ASCII.lowercased(name)] = value }
        let answer: Response
        if body.count > context.configuration.maxBodyBytes {
            let problem = HTTPProblem.payloadTooLarge(limit: context.configuration.maxBodyBytes)
            answer = context.finish(
                Response.problem(problem.problem(requestID: id), headers: problem.headers), requestID: id)
        } else {
            var request = Request(
                id: id, method: method, path: path, query: query, headers: lowered, body: body,
                remoteAddress: remoteAddress)
            request.rawQuery = rawQuery
            let later = Later()
            let previous = trifactor_set_http_thread(1)
            let ready = context.dispatch(request, suspend: {}) { later.fulfil($0) }
            _ = trifactor_set_http_thread(previous)
            answer = ready ?? later.wait()
        }
        context.completed(
            id: id, method: method, path: path, status: answer.status, stats: answer.routeStats, started: started,
            traceParent: lowered["traceparent"], aborted: false)
        return answer
    }

    /// Requests begun and not yet answered.
    package var requestsInFlight: Int { context.inFlight.load(ordering: .acquiring) }

    /// Stops accepting connections, answers what is in flight with
    /// `Connection: close` so keep-alive clients leave, waits up to
    /// `drainTimeout` seconds for those requests, lets the workers finish
    /// every queued job (each resumes its connection), and only then stops
    /// libmicrohttpd, which must never be stopped with a suspended connection.
    package func stop(drainTimeout: TimeInterval = 30) {
        guard
            let handle = daemon.withLock({ d -> DaemonHandle? in
                let h = d
                d = nil
                return h
            })?.pointer
        else { return }
        context.draining.store(true, ordering: .releasing)
        let listener = MHD_quiesce_daemon(handle)
        // Long polls end now with their timeout answer; they must not hold the drain.
        context.hub.drain()
        let deadline = Date().addingTimeInterval(drainTimeout)
        while context.inFlight.load(ordering: .acquiring) > 0 && Date() < deadline {
            usleep(10_000)
        }
        context.workers.stopAndWait()
        context.databaseWorkers.stopAndWait()
        context.longPollWorkers.stopAndWait()
        // Before the daemon closes its sockets: their numbers are reused at once, by other servers too.
        context.connections.stop()
        MHD_stop_daemon(handle)
        // With internal threads the listening socket may be closed only after the daemon stopped.
        if listener >= 0 { close(listener) }
    }
}

/// Copies of the PEM texts that libmicrohttpd may read while it runs, freed
/// with the server. `@unchecked Sendable`: written once in `init`, then only
/// read (by libmicrohttpd), and freed in `deinit` when nothing else can run.
private final class TLSStrings: @unchecked Sendable {
    let certificate: UnsafeMutablePointer<CChar>?
    let key: UnsafeMutablePointer<CChar>?

    init(certificate: String?, key: String?) {
        self.certificate = certificate.flatMap { strdup($0) }
        self.key = key.flatMap { strdup($0) }
    }

    deinit {
        free(certificate)
        free(key)
    }
}

/// An answer that another thread delivers once.
private final class Later: Sendable {
    private let state = Mutex<Response?>(nil)
    private let ready = DispatchSemaphore(value: 0)

    func fulfil(_ response: Response) {
        state.withLock { $0 = response }
        ready.signal()
    }

    func wait() -> Response {
        ready.wait()
        return state.withLock { $0! }
    }
}
