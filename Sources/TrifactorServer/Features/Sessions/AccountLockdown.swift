import Core
import Store

/// Everything that lets someone act as a user ends at once, in the caller's transaction: when the account may be in
/// someone else's hands (the password reset, "This wasn't me") or an administrator ends its sessions. One
/// implementation, so no path forgets a part: every session, with the end hooks each session's end runs (the grants
/// that lived on it, and the back-channel logout tokens relying parties are sent), then every grant left (offline
/// ones too), sign-ins waiting for their second factor, and pushes waiting on a device.
enum AccountLockdown {
    /// Ends it all for `user`; returns how many sessions ended. `hooks`: the sessions feature's end hooks.
    @discardableResult
    static func endEverything(
        of user: UserID, reason: SessionEndReason, hooks: SessionEndHooks?, now: Int64, on db: any SQLConnection
    ) throws -> Int {
        // The account's row first: every sign-in takes it before it spends a pending sign-in or makes a session, so
        // none finishes unseen beside this (on PostgreSQL, where writers run at once).
        try AccountRepository.lock(user, on: db)
        try PendingSignInRepository.endPending(of: user, now: now, on: db)
        try PushRepository.denyPending(of: user, now: now, on: db)
        let ended = try SessionRepository.endAll(user, at: now, reason: reason, on: db)
        for session in ended { try hooks?.run(session, user: user, now: now, on: db) }
        try GrantRepository.revokeAll(of: user.raw, at: now, on: db)
        return ended.count
    }
}
