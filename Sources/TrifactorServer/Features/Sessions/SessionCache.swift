import Core
import Foundation
import Synchronization

/// Live sessions kept in memory, so that `GET /v1/session` (asked by every
/// page of an app) is answered on the HTTP thread without database I/O.
///
/// - An entry is trusted for `lifetime` (1 s) after it was read from the
///   database, so a change that reaches this instance late (a revocation on
///   another instance whose notification was lost) is seen within that
///   second: the bounded staleness.
/// - Sign-out, revocation, step-up, verification, a first factor enrolled and
///   a factor removed drop the entries at once (`invalidate`), on this
///   instance directly and on the others through the change feed.
/// - Uses are recorded in memory and written in batches (`drainTouches`),
///   at most once per slice of the idle timeout, as before.
///
/// Sharded 16 ways by token hash, so the HTTP threads rarely meet on a lock.
final class SessionCache: Sendable {
    struct Entry: Sendable {
        var session: SessionRecord
        let user: UserRecord
        /// Monotonic time (ns) it was read from the database.
        let loadedAt: UInt64
        /// The session check's answer, as last rendered for the session's last-seen time.
        var rendered: (lastSeenAt: Int64, body: [UInt8])? = nil
    }

    private struct Shard {
        var entries: [String: Entry] = [:]
    }

    /// A lock of its own per shard (a `Mutex` cannot sit in an array itself).
    private final class Locked: Sendable {
        let shard = Mutex(Shard())
    }

    private let shards: [Locked] = (0..<16).map { _ in Locked() }
    /// Uses not yet written: session id → last seen (ms).
    private let touches = Mutex<[SessionID: Int64]>([:])
    private let lifetime: UInt64
    private let capacity: Int

    init(lifetime: TimeInterval = 1, capacity: Int = 100_000) {
        self.lifetime = UInt64(lifetime * 1e9)
        self.capacity = capacity
    }

    /// The shard of a hex token hash: its last hex digit.
    private func shard(_ tokenHash: String) -> Locked {
        let digit = Int(tokenHash.utf8.last ?? 0)
        return shards[(digit >= 0x61 ? digit - 0x61 + 10 : digit - 0x30) & 15]
    }

    /// The entry for `tokenHash` while it is fresh. `now` is read before the
    /// shard's lock, so another thread may store an entry loaded after it:
    /// such an entry is as fresh as can be (an age below zero is zero, not
    /// an overflow: under load that trapped and took the process down).
    func lookup(_ tokenHash: String, now: UInt64 = DispatchTime.now().uptimeNanoseconds) -> Entry? {
        shard(tokenHash).shard.withLock { s in
            guard let entry = s.entries[tokenHash] else { return nil }
            guard now.subtractingReportingOverflow(entry.loadedAt).overflow || now - entry.loadedAt < lifetime else {
                s.entries[tokenHash] = nil
                return nil
            }
            return entry
        }
    }

    /// The kept answer for `tokenHash`, under one lock and without copying
    /// the entry, when the entry is fresh, its answer was rendered for the
    /// session's current last-seen time, and `isCurrent` accepts the session
    /// (not expired, no use to record): the session check's fastest path.
    func keptAnswer(
        _ tokenHash: String, now: UInt64 = DispatchTime.now().uptimeNanoseconds,
        isCurrent: (borrowing SessionRecord) -> Bool
    ) -> [UInt8]? {
        shard(tokenHash).shard.withLock { s -> [UInt8]? in
            guard let index = s.entries.index(forKey: tokenHash) else { return nil }
            let entry = s.entries.values[index]
            guard now.subtractingReportingOverflow(entry.loadedAt).overflow || now - entry.loadedAt < lifetime,
                let rendered = entry.rendered, rendered.lastSeenAt == entry.session.lastSeenAt, isCurrent(entry.session)
            else { return nil }
            return rendered.body
        }
    }

    /// Keeps what the database just said about a live session.
    func store(_ tokenHash: String, session: SessionRecord, user: UserRecord) {
        let entry = Entry(session: session, user: user, loadedAt: DispatchTime.now().uptimeNanoseconds)
        shard(tokenHash).shard.withLock { s in
            if s.entries.count >= capacity / shards.count { s.entries.removeAll(keepingCapacity: true) }
            s.entries[tokenHash] = entry
        }
    }

    /// The answer rendered for `tokenHash`'s session at last-seen time
    /// `lastSeenAt`, rendered now by `render` if it was not yet (it only
    /// changes when the session's use is recorded: once a minute or so).
    func rendered(_ tokenHash: String, lastSeenAt: Int64, render: () -> [UInt8]) -> [UInt8] {
        if let kept = shard(tokenHash).shard.withLock({ $0.entries[tokenHash]?.rendered }),
            kept.lastSeenAt == lastSeenAt
        {
            return kept.body
        }
        let body = render()
        shard(tokenHash).shard.withLock { $0.entries[tokenHash]?.rendered = (lastSeenAt, body) }
        return body
    }

    /// Records a use of the session at `millis`: kept in the entry, written by the next `drainTouches`.
    func touch(_ tokenHash: String, sessionID: SessionID, at millis: Int64) {
        shard(tokenHash).shard.withLock { s in s.entries[tokenHash]?.session.lastSeenAt = millis }
        touches.withLock { pending in pending[sessionID] = max(pending[sessionID] ?? 0, millis) }
    }

    /// The uses recorded since the last call.
    func drainTouches() -> [SessionID: Int64] {
        touches.withLock { pending in
            defer { pending = [:] }
            return pending
        }
    }

    /// Drops what a change made stale: `session:<id>` or `user:<id>` (other keys are ignored).
    func invalidate(_ key: String) {
        if key.hasPrefix("session:") {
            let id = SessionID(String(key.dropFirst("session:".count)))
            for locked in shards {
                locked.shard.withLock { s in s.entries = s.entries.filter { $0.value.session.id != id } }
            }
        } else if key.hasPrefix("user:") {
            let id = UserID(String(key.dropFirst("user:".count)))
            for locked in shards {
                locked.shard.withLock { s in s.entries = s.entries.filter { $0.value.user.id != id } }
            }
        }
    }
}
