import Crypto
package import Foundation
import Synchronization

/// Sessions by the SHA-256 of their cookie, in memory (a restart signs
/// everyone out). An anonymous visitor has none (its forms carry a
/// `VisitorCSRF` token): a session starts when the email is posted, an
/// account opening or a passkey sign-in starts.
///
/// - Pre-sign-in sessions number at most `capacity`: one more drops the
///   oldest (O(1), no scan of the table on the request path), and each
///   ends after `preSignInLifetime` idle.
/// - Signed-in sessions end after `lifetime` idle (12 hours).
/// - `sweep(now:)`, run by a timer (`BankApp.start`), drops the idle ones
///   of both kinds; `find` never returns one past its time meanwhile.
package final class BankSessions: Sendable {
    private let table: Mutex<CappedTable<BankSession>>
    /// A signed-in session unused this long is forgotten.
    let lifetime: TimeInterval
    /// A session not signed in yet and unused this long is forgotten.
    let preSignInLifetime: TimeInterval

    /// - Parameters:
    ///   - capacity: the most pre-sign-in sessions held at once.
    ///   - lifetime: the idle time after which a signed-in session ends.
    ///   - preSignInLifetime: the idle time after which a session not signed in yet ends.
    package init(capacity: Int = 10_000, lifetime: TimeInterval = 12 * 3600, preSignInLifetime: TimeInterval = 30 * 60)
    {
        table = Mutex(CappedTable(capacity: capacity))
        self.lifetime = lifetime
        self.preSignInLifetime = preSignInLifetime
    }

    /// Sessions held now, and those of them not signed in.
    var counts: (all: Int, preSignIn: Int) { table.withLock { ($0.count, $0.cappedCount) } }

    /// Whether `session` has been idle past its lifetime at `now`.
    func isIdle(_ session: BankSession, now: Date) -> Bool {
        now.timeIntervalSince(session.lastSeen) > (session.isSignedIn ? lifetime : preSignInLifetime)
    }

    func find(_ cookie: String?, now: Date) -> BankSession? {
        guard let cookie else { return nil }
        let key = SHA256.hex(cookie)
        return table.withLock { all in
            guard let s = all[key] else { return nil }
            if isIdle(s, now: now) {
                all.remove(key)
                return nil
            }
            return s
        }
    }

    /// A new session under a new cookie (when a visitor starts signing in, and rotated at sign-in and step-up: the old cookie dies).
    /// A session not signed in counts against `capacity`.
    func issue(replacing old: String?, carrying session: BankSession? = nil, secure: Bool, now: Date) -> (
        SessionCookie, BankSession
    ) {
        let cookie = SessionCookie.fresh(secure: secure)
        let fresh = session ?? BankSession(now: now)
        table.withLock { all in
            if let old { all.remove(SHA256.hex(old)) }
            all.insert(SHA256.hex(cookie.value), fresh, capped: !fresh.isSignedIn)
        }
        return (cookie, fresh)
    }

    func end(_ cookie: String?) {
        guard let cookie else { return }
        table.withLock { _ = $0.remove(SHA256.hex(cookie)) }
    }

    /// Ends every session `matching` says (a customer signed out at Trifactor); how many ended.
    @discardableResult
    func endAll(matching: @Sendable (BankSession) -> Bool) -> Int {
        table.withLock { all in all.removeAll(where: matching) }
    }

    /// Drops every session idle past its lifetime at `now`; how many went.
    @discardableResult
    package func sweep(now: Date) -> Int {
        table.withLock { all in all.removeAll { isIdle($0, now: now) } }
    }
}
