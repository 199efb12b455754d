import Core
import Crypto
import Messaging
import Store

/// The one place sessions are born: the token (shown once, stored as its
/// SHA-256), the record with its level, methods and proof times, and the
/// audit entry, all in the caller's transaction. A sign-in from a device
/// (user agent) the account has not used in 180 days emails its owner.
/// A user holds at most `maxLive` sessions: a new one ends the oldest.
struct SessionIssuer: Sendable {
    static let knownDeviceWindow: Int64 = 180 * 24 * 3_600_000

    let random: RandomSource
    var outbox: Outbox? = nil
    /// The live sessions a user may hold (`TRIFACTOR_MAX_SESSIONS_PER_USER`).
    var maxLive = 50

    /// What a sign-in proved.
    struct Proofs {
        var aal: AssuranceLevel
        /// RFC 8176 methods, in the order proven.
        var methods: [AuthMethod]
        /// When the password was checked (nil for passwordless sign-ins).
        var passwordVerifiedAt: Int64?
        /// Whether a second factor was proven now.
        var secondFactor: Bool
        /// The device key that proved it, if one did.
        var deviceID: FactorID? = nil
    }

    /// A new session for `userID` at `now`, its token, and its audit entry.
    func issue(
        userID: UserID, _ proofs: Proofs, client: AuditContext, detail: String, now: Int64,
        on db: any SQLConnection
    ) throws -> (token: String, session: SessionRecord) {
        // Every way of signing in ends here: a disabled account gets no session, whatever it proved. Read under the
        // account's row lock, the order account-wide changes take (`AccountLockdown`), so a session is never made
        // beside a lockdown that cannot see it.
        try AccountRepository.lock(userID, on: db)
        if try AccountRepository.isDisabled(userID, on: db) {
            throw SignInFailure.disabled
        }
        if let outbox { try tellOwnerOfNewDevice(userID, client: client, outbox: outbox, now: now, on: db) }
        let token = SessionToken.generate(random)
        let session = SessionRecord(
            id: .random(using: random), userID: userID, aal: proofs.aal, methods: proofs.methods, createdAt: now,
            lastSeenAt: now, passwordVerifiedAt: proofs.passwordVerifiedAt,
            mfaVerifiedAt: proofs.secondFactor ? now : nil,
            ip: client.ip, userAgent: client.userAgent, deviceID: proofs.deviceID)
        try SessionRepository.insert(session, tokenHash: SHA256.hex(token), on: db)
        // Caches (this instance's and others') drop the ended ones within their one-second reload: publishing
        // news here, inside the caller's transaction, would take a second connection before it commits.
        for ended in try SessionRepository.endBeyond(maxLive, keeping: session.id, of: userID, at: now, on: db) {
            try AuditLog.append(
                client.event(.sessionRevoked, .success, userID: userID, detail: "id=\(ended.raw) reason=session_limit"),
                at: now, on: db)
        }
        let methods = proofs.methods.map(\.rawValue).joined(separator: ",")
        try AuditLog.append(
            client.event(
                .signInSucceeded, .success, userID: userID,
                detail: "aal=\(proofs.aal.rawValue) methods=\(methods) \(detail)"), at: now, on: db)
        return (token, session)
    }

    /// Emails the owner when an account that has signed in before does so
    /// from a user agent none of its sessions of the last 180 days had.
    private func tellOwnerOfNewDevice(
        _ userID: UserID, client: AuditContext, outbox: Outbox, now: Int64, on db: any SQLConnection
    ) throws {
        let since = now - Self.knownDeviceWindow
        guard
            try db.queryOne(
                "SELECT 1 AS seen FROM sessions WHERE user_id = $1 AND created_at > $2 LIMIT 1",
                [userID.sql, .int(since)]) != nil,
            try db.queryOne(
                "SELECT 1 AS seen FROM sessions WHERE user_id = $1 AND created_at > $2 AND user_agent IS NOT DISTINCT FROM $3 LIMIT 1",
                [userID.sql, .int(since), SQLValue(client.userAgent)]) == nil,
            let user = try AccountRepository.find(id: userID, on: db)
        else { return }
        try outbox.enqueueEmail(
            "new_sign_in", to: user.email, language: outbox.texts.language(locale: nil, user: user.locale),
            values: client.branded([
                "device": .text(DeviceName.describe(userAgent: client.userAgent)), "address": .text(client.ip),
            ]),
            now: now, on: db)
    }
}
