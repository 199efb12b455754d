internal import CPostgres
import Foundation
import Glibc
import Synchronization

/// `LISTEN` on a connection of its own, on a thread of its own: each
/// `NOTIFY` payload on the channel (from any process on the database,
/// this one included) is handed to `onNotification`. A lost connection is
/// reopened every second; after each reconnection `onReconnect` runs, since
/// notifications sent meanwhile are lost.
final class PostgresListener: DatabaseListener {
    private let conninfo: String
    private let channel: String
    private let onNotification: @Sendable (String) -> Void
    private let onReconnect: @Sendable () -> Void
    private let stopping = Atomic<Bool>(false)
    private let exited = DispatchSemaphore(value: 0)

    init(
        conninfo: String, channel: String, onNotification: @escaping @Sendable (String) -> Void,
        onReconnect: @escaping @Sendable () -> Void
    ) {
        self.conninfo = conninfo
        self.channel = channel
        self.onNotification = onNotification
        self.onReconnect = onReconnect
        let thread = Thread { [self] in run() }
        thread.name = "trifactor-listen"
        thread.start()
    }

    func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        exited.wait()
    }

    private func run() {
        var connection: OpaquePointer?
        var connectedBefore = false
        while !stopping.load(ordering: .acquiring) {
            if connection == nil || PQstatus(connection) != CONNECTION_OK {
                if let old = connection { PQfinish(old) }
                connection = connect()
                if connection == nil {
                    sleep(1)
                    continue
                }
                if connectedBefore { onReconnect() }
                connectedBefore = true
            }
            guard let connection else { continue }
            var descriptor = pollfd(fd: PQsocket(connection), events: Int16(POLLIN), revents: 0)
            // Wake at least every 250 ms to notice stop().
            guard poll(&descriptor, 1, 250) > 0 else { continue }
            guard PQconsumeInput(connection) == 1 else { continue }  // the status check reconnects
            while let notification = PQnotifies(connection) {
                if let extra = notification.pointee.extra { onNotification(String(cString: extra)) }
                PQfreemem(notification)
            }
        }
        if let connection { PQfinish(connection) }
        exited.signal()
    }

    /// A connection listening on the channel, or nil when that failed.
    private func connect() -> OpaquePointer? {
        guard let connection = PQconnectdb(conninfo) else { return nil }
        guard PQstatus(connection) == CONNECTION_OK else {
            PQfinish(connection)
            return nil
        }
        // The channel name is ours (letters and underscores), never client input.
        let result = PQexec(connection, "LISTEN \(channel)")
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK else {
            PQfinish(connection)
            return nil
        }
        return connection
    }
}
