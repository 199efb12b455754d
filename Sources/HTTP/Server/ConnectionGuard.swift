internal import CMicroHTTPDShim
import Foundation
import Glibc
import Logging
import Synchronization

/// Deadlines libmicrohttpd cannot set, so that slow clients cannot hold
/// connections: a request's head must arrive within `headerTimeout` of the
/// connection opening (or of the previous answer on it), and its body within
/// `bodyTimeout` of its head. libmicrohttpd's own timeout only counts
/// silence, which one byte every few seconds defeats. Past a deadline the
/// socket is shut down; libmicrohttpd then reads the end of the stream and
/// closes the connection. A request being handled has no deadline.
///
/// A `ConnectionRecord` hangs off each connection's socket context; the
/// guard keeps them in a set that a thread of its own sweeps 4 times a second.
final class ConnectionGuard: Sendable {
    private let headerTimeout: UInt64
    private let bodyTimeout: UInt64
    private let logger: Logger
    private let records = Mutex<[ObjectIdentifier: ConnectionRecord]>([:])
    private let stopping = Mutex(false)
    private let wake = DispatchSemaphore(value: 0)
    private let exited = DispatchSemaphore(value: 0)

    init(headerTimeout: TimeInterval, bodyTimeout: TimeInterval, logger: Logger) {
        self.headerTimeout = UInt64(headerTimeout * 1e9)
        self.bodyTimeout = UInt64(bodyTimeout * 1e9)
        self.logger = logger
    }

    /// Starts the sweeping thread.
    func start() {
        let thread = Thread { [self] in
            while !stopping.withLock({ $0 }) {
                sweep(now: DispatchTime.now().uptimeNanoseconds)
                _ = wake.wait(timeout: .now() + .milliseconds(250))
            }
            exited.signal()
        }
        thread.name = "trifactor-connection-guard"
        thread.start()
    }

    /// Stops the sweeping thread and waits for it (once).
    func stop() {
        let first = stopping.withLock { s -> Bool in
            defer { s = true }
            return !s
        }
        if first {
            wake.signal()
            exited.wait()
        }
    }

    /// A connection opened: its first request's head is due.
    func opened(_ connection: OpaquePointer) -> ConnectionRecord {
        let record = ConnectionRecord(
            fd: trifactor_mhd_connection_fd(connection),
            address: trifactor_mhd_client_address(connection).flatMap(SocketAddress.text(of:)))
        record.expect(.head, by: DispatchTime.now().uptimeNanoseconds + headerTimeout)
        records.withLock { $0[ObjectIdentifier(record)] = record }
        return record
    }

    /// A connection closed (its socket is still open, and closed right after).
    /// The connections open now (each is registered when it opens and removed when it closes).
    var count: Int { records.withLock { $0.count } }

    func closed(_ record: ConnectionRecord) {
        // Under the lock: the sweeper never shuts down a socket number after this.
        records.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(record)) }
    }

    /// The head arrived: the body is due.
    func headReceived(_ record: ConnectionRecord?) {
        record?.expect(.body, by: DispatchTime.now().uptimeNanoseconds + bodyTimeout)
    }

    /// The whole request arrived: no deadline while it is handled.
    func requestReceived(_ record: ConnectionRecord?) {
        record?.expect(.none, by: 0)
    }

    /// The request was answered: the next head on this connection is due.
    func answered(_ record: ConnectionRecord?) {
        record?.expect(.head, by: DispatchTime.now().uptimeNanoseconds + headerTimeout)
    }

    /// Sends `response` as is (when given: plain HTTP only) and shuts the
    /// socket down, for a request libmicrohttpd would otherwise leave
    /// unanswered.
    func refuse(_ record: ConnectionRecord?, response: [UInt8]?) {
        guard let record else { return }
        records.withLock { _ in
            record.expect(.none, by: 0)
            if let response {
                _ = response.withUnsafeBytes {
                    Glibc.send(record.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                }
            }
            shutdown(record.fd, Int32(SHUT_RDWR))
        }
    }

    /// Shuts down every connection past its deadline; returns how many.
    @discardableResult
    func sweep(now: UInt64) -> Int {
        let late = records.withLock { all -> [(Int32, ConnectionRecord.Phase)] in
            var late: [(Int32, ConnectionRecord.Phase)] = []
            for record in all.values {
                let (phase, deadline) = record.expectation
                guard phase != .none, deadline <= now else { continue }
                record.expect(.none, by: 0)
                shutdown(record.fd, Int32(SHUT_RDWR))
                late.append((record.fd, phase))
            }
            return late
        }
        for (_, phase) in late {
            logger.log(.info, "connection_timeout", ["waiting_for": .string(phase == .head ? "head" : "body")])
        }
        return late.count
    }
}

/// One connection's socket and what it owes by when. Kept alive by a
/// retained pointer in libmicrohttpd's socket context.
final class ConnectionRecord: Sendable {
    enum Phase: UInt64 {
        case none = 0
        case head = 1
        case body = 2
    }
    let fd: Int32
    /// The peer's address as text, read once when the connection opened (not per request).
    let address: String?
    /// The phase in the low 2 bits, the deadline (ns) above them: one word,
    /// so the sweeper never pairs one phase with another phase's deadline.
    private let state = Atomic<UInt64>(0)

    init(fd: Int32, address: String?) {
        self.fd = fd
        self.address = address
    }

    func expect(_ next: Phase, by nanoseconds: UInt64) {
        state.store(next == .none ? 0 : nanoseconds << 2 | next.rawValue, ordering: .releasing)
    }

    var expectation: (Phase, UInt64) {
        let value = state.load(ordering: .acquiring)
        return (Phase(rawValue: value & 3) ?? .none, value >> 2)
    }
}
