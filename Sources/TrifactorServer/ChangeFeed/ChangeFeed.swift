import HTTP
import Logging
import Store

/// News of a change that others wait for or keep copies of: a device's
/// pending approvals (`device:<id>`), an approval's decision
/// (`approval:<id>`), a session or a user's sessions that changed
/// (`session:<id>`, `user:<id>`). Published after the change commits
/// (inside a request's transaction, held until that commits), it wakes the
/// long polls of this process at once and reaches the other instances on
/// the same PostgreSQL through `NOTIFY` (they wake theirs from `LISTEN`). On SQLite, one process owns the data and the
/// local wake-up is all there is.
struct ChangeFeed: Sendable {
    /// The PostgreSQL channel: a fixed identifier, never input.
    static let channel = "trifactor_changes"

    let publish: @Sendable (_ key: String) -> Void

    /// Hands the news to `local` (long polls, session cache) and tells the other instances through `database`.
    static func live(local: @escaping @Sendable (String) -> Void, database: any Database, logger: Logger) -> ChangeFeed
    {
        let send: @Sendable (String) -> Void = { key in
            local(key)
            do {
                try database.notify(channel: channel, payload: key)
            } catch {
                // The other instances' waiters then see the change at their deadline.
                logger.log(
                    .warning, "change_notify_failed",
                    ["key": .string(key), "error": .string(String(reflecting: error))])
            }
        }
        return ChangeFeed { key in
            // Inside a request's transaction the change is not visible yet: it is news once committed.
            if let request = RequestTransaction.current { request.whenCommitted { send(key) } } else { send(key) }
        }
    }

    /// Delivers the other instances' news to `local` (PostgreSQL only);
    /// after a lost connection every waiter looks again (`lost`), since news
    /// may have been missed (the session cache forgets within its second anyway).
    static func listen(
        local: @escaping @Sendable (String) -> Void, lost: @escaping @Sendable () -> Void,
        database: any Database
    ) -> (any DatabaseListener)? {
        database.listen(channel: channel, onNotification: local, onReconnect: lost)
    }
}
