import HTTP
import Logging
import Store

/// News of a change that others wait for: a device's pending approvals, an
/// approval's decision, a session that ended. Published after the change
/// commits, it wakes the long polls of this process at once and reaches
/// the other instances on the same PostgreSQL through `NOTIFY` (they wake
/// theirs from `LISTEN`). On SQLite, one process owns the data and the
/// local wake-up is all there is.
struct ChangeFeed: Sendable {
    /// The PostgreSQL channel: a fixed identifier, never input.
    static let channel = "trifactor_changes"

    let publish: @Sendable (_ key: String) -> Void

    /// Wakes `hub` and tells the other instances through `database`.
    static func live(hub: LongPollHub, database: any Database, logger: Logger) -> ChangeFeed {
        ChangeFeed { key in
            hub.notify(key)
            do {
                try database.notify(channel: channel, payload: key)
            } catch {
                // The other instances' waiters then see the change at their deadline.
                logger.log("warn", "change_notify_failed", ["key": .string(key), "error": .string(String(reflecting: error))])
            }
        }
    }

    /// Delivers the other instances' news to `hub` (PostgreSQL only); after
    /// a lost connection every waiter looks again, since news may be missed.
    static func listen(hub: LongPollHub, database: any Database) -> (any DatabaseListener)? {
        database.listen(channel: channel, onNotification: { hub.notify($0) }, onReconnect: { hub.notifyAll() })
    }
}
