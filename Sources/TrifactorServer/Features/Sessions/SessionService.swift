import Core
import Crypto
import Foundation
import Store

/// Signing in with the password, knowing who calls, signing out, and a
/// user's sessions. Sessions are served from the in-memory cache while an
/// entry is fresh; every change that ends or alters one is published, so
/// each instance drops its copy at once.
struct SessionService: Sendable {
    /// A factor the user can prove after the password, as the sign-in hints show it.
    struct Hint: Sendable {
        let factorID: FactorID
        let kind: Factor.Kind
        let displayName: String?
        let maskedPhone: String?
    }

    /// What the password led to.
    enum SignInOutcome {
        case session(token: String, SessionRecord)
        /// The user has second factors: a pending sign-in, the factors to prove, and the account's language.
        case secondFactor(pendingCredential: String, hints: [Hint], expiresAt: Int64, locale: String?)
    }

    let transactions: Transactions
    let clock: Clock
    let random: RandomSource
    let hashing: PasswordHashing
    let policies: SessionPolicies
    let lockout: LockoutPolicy
    let signInPerIP: RateLimiter.Limit
    let cache: SessionCache
    let changes: ChangeFeed
    let issuer: SessionIssuer
    /// The factors a user can prove after the password (the second-factor feature's answer).
    let hints: @Sendable (UserID, any SQLConnection) throws -> [Hint]
    /// Starts a pending sign-in for a user with factors (the second-factor feature's); returns its credential and when it expires.
    let startSecondStep:
        @Sendable (UserID, _ now: Int64, any SQLConnection) throws -> (credential: String, expiresAt: Int64)
    /// What other features do when a user ends a session.
    var endHooks = SessionEndHooks()

    // MARK: Sign-in

    /// The detail of the `signin.succeeded` entry of a right password whose second factor is still due: not a
    /// sign-in yet (no session), so the security page and webhooks leave it out and wait for the entry that
    /// issues the session.
    static let secondFactorDue = "password ok, second factor required"

    /// Checks the password. The attempt is counted (and the IP's bucket
    /// spent) in one transaction before the Argon2id check, which runs
    /// outside any transaction; the outcome is recorded in one after it.
    /// - Throws: `SignInFailure.invalidCredentials` (wrong password or unknown
    ///   email: one answer, one Argon2id verification), `.locked`,
    ///   `CommonFailure.rateLimited`, `.invalidFields`.
    func signIn(email rawEmail: String, password: String, client: AuditContext) throws -> SignInOutcome {
        guard let email = EmailAddress(rawEmail) else {
            throw CommonFailure.invalid("email", "is not a valid email address")
        }
        guard !password.isEmpty, password.utf8.count <= 4096 else { throw SignInFailure.invalidCredentials }
        let throttle = LoginThrottle(policy: lockout)
        let now = clock.now().millis
        enum Gate {
            case proceed(UserRecord?)
            case refused(any Error)
        }
        let gate = try transactions.write { db -> Gate in
            if let wait = try RateLimiter.take(
                "signin:ip:\(client.clientKey)", limit: signInPerIP, nowMillis: now, on: db)
            {
                try AuditLog.append(client.event(.signInRateLimited, .denied), at: now, on: db)
                return .refused(CommonFailure.rateLimited(retryAfter: wait))
            }
            let user = try AccountRepository.find(email: email.value, on: db)
            if case .locked(let wait) = try throttle.admit(email: email, nowMillis: now, on: db) {
                try AuditLog.append(client.event(.signInLocked, .denied, userID: user?.id), at: now, on: db)
                return .refused(SignInFailure.locked(retryAfter: wait))
            }
            return .proceed(user)
        }
        guard case .proceed(let user) = gate else {
            if case .refused(let failure) = gate { throw failure }
            throw SignInFailure.invalidCredentials
        }

        let normalized = PasswordPolicy.normalize(password)
        let matches = hashing.verify(normalized, user?.passwordHash ?? hashing.decoy()) && user != nil
        guard let user, matches else {
            try transactions.write {
                try AuditLog.append(client.event(.signInFailed, .failure, userID: user?.id), at: now, on: $0)
            }
            throw SignInFailure.invalidCredentials
        }
        // Only the right password learns that the account is disabled (no enumeration).
        if user.disabledAt != nil {
            try transactions.write {
                try AuditLog.append(
                    client.event(.signInFailed, .denied, userID: user.id, detail: "account disabled"), at: now, on: $0)
            }
            throw SignInFailure.disabled
        }
        let upgraded = hashing.needsRehash(user.passwordHash) ? try? hashing.hash(normalized) : nil

        return try transactions.write { db -> SignInOutcome in
            // The account's row first (the order every account-wide change takes: `AccountLockdown`), then the
            // password checked above must still be the account's: a reset or "This wasn't me" that committed
            // meanwhile ended everything, and this password no longer signs in.
            try AccountRepository.lock(user.id, on: db)
            guard try AccountRepository.find(id: user.id, on: db)?.passwordHash == user.passwordHash else {
                throw SignInFailure.invalidCredentials
            }
            try throttle.reset(email: email, on: db)
            if let upgraded,
                try AccountRepository.replacePasswordHash(user.id, old: user.passwordHash, new: upgraded, on: db)
            {
                try AuditLog.append(client.event(.passwordRehashed, .success, userID: user.id), at: now, on: db)
            }
            // A user with second factors gets a pending sign-in, never a session, from the password alone.
            let hints = try hints(user.id, db)
            if !hints.isEmpty {
                let (credential, expiresAt) = try startSecondStep(user.id, now, db)
                try AuditLog.append(
                    client.event(
                        .signInSucceeded, .success, userID: user.id, detail: Self.secondFactorDue),
                    at: now, on: db)
                return .secondFactor(
                    pendingCredential: credential, hints: hints, expiresAt: expiresAt, locale: user.locale)
            }
            let proofs = SessionIssuer.Proofs(aal: .aal1, methods: [.pwd], passwordVerifiedAt: now, secondFactor: false)
            let issued = try issuer.issue(userID: user.id, proofs, client: client, detail: "", now: now, on: db)
            return .session(token: issued.token, issued.session)
        }
    }

    // MARK: Who is calling

    /// The live session of `token` and its user, its use recorded (in memory,
    /// written in batches): from the cache while its entry is fresh, else
    /// from a read-only transaction, and a write only when the session has
    /// just expired (recorded once, and audited).
    /// - Throws: `CommonFailure.unauthenticated` for a missing, unknown or
    ///   ended token, `.sessionExpired` once a lifetime has run out.
    func authenticate(token: String?, client: AuditContext) throws -> Caller {
        if let cached = cached(token: token) { return cached }
        guard let token, SessionToken.isWellFormed(token) else { throw CommonFailure.unauthenticated }
        let tokenHash = SHA256.hex(token)
        let now = clock.now()
        let found = try transactions.read { db -> (SessionRecord, UserRecord?)? in
            guard let session = try SessionRepository.find(tokenHash: tokenHash, on: db) else { return nil }
            return (session, try AccountRepository.find(id: session.userID, on: db))
        }
        guard let (session, user) = found, let user, user.disabledAt == nil else { throw CommonFailure.unauthenticated }
        if session.endedAt != nil {
            throw session.endReason == .expired ? CommonFailure.sessionExpired : CommonFailure.unauthenticated
        }
        let policy = policies[session.aal]
        let lastSeen = Date(millis: session.lastSeenAt)
        if policy.isExpired(created: Date(millis: session.createdAt), lastSeen: lastSeen, now: now) {
            try transactions.write { db in
                if try SessionRepository.end(session.id, at: now.millis, reason: .expired, on: db) {
                    try AuditLog.append(
                        client.event(.sessionExpired, .success, userID: session.userID), at: now.millis, on: db)
                }
            }
            throw CommonFailure.sessionExpired
        }
        cache.store(tokenHash, session: session, user: user)
        return Caller(user: user, session: recordUse(session, tokenHash: tokenHash, now: now), tokenHash: tokenHash)
    }

    /// The caller from the cache alone (no I/O, for the HTTP thread): nil when
    /// the token is not cached or its session has expired (the database path
    /// records that).
    func cached(token: String?) -> Caller? {
        guard let token, SessionToken.isWellFormed(token) else { return nil }
        return cached(tokenHash: SHA256.hex(token))
    }

    /// `cached(token:)` for a token already hashed.
    func cached(tokenHash: String) -> Caller? {
        guard let entry = cache.lookup(tokenHash) else { return nil }
        let now = clock.now()
        let policy = policies[entry.session.aal]
        guard
            !policy.isExpired(
                created: Date(millis: entry.session.createdAt), lastSeen: Date(millis: entry.session.lastSeenAt),
                now: now)
        else {
            return nil
        }
        return Caller(
            user: entry.user, session: recordUse(entry.session, tokenHash: tokenHash, now: now), tokenHash: tokenHash)
    }

    /// The session check's answer straight from the cache when nothing about
    /// the session has to change (not expired, no use to record, already
    /// rendered); nil sends the caller down `cached(tokenHash:)`.
    func keptAnswer(tokenHash: String) -> [UInt8]? {
        let now = clock.now()
        return cache.keptAnswer(tokenHash) { session in
            let policy = policies[session.aal]
            let lastSeen = Date(millis: session.lastSeenAt)
            return !policy.isExpired(created: Date(millis: session.createdAt), lastSeen: lastSeen, now: now)
                && !policy.shouldRecordUse(lastSeen: lastSeen, now: now)
        }
    }

    /// The session check's answer for a cached `caller`, rendered by `render`
    /// once per change of the session's last-seen time.
    func cachedAnswer(_ caller: Caller, render: () -> [UInt8]) -> [UInt8] {
        cache.rendered(caller.tokenHash, lastSeenAt: caller.session.lastSeenAt, render: render)
    }

    /// Notes a use in memory when the session's slice of the idle timeout has passed.
    private func recordUse(_ session: SessionRecord, tokenHash: String, now: Date) -> SessionRecord {
        guard policies[session.aal].shouldRecordUse(lastSeen: Date(millis: session.lastSeenAt), now: now) else {
            return session
        }
        cache.touch(tokenHash, sessionID: session.id, at: now.millis)
        var used = session
        used.lastSeenAt = now.millis
        return used
    }

    /// Writes the uses seen since the last call, in one transaction.
    func writeUses() throws {
        let uses = cache.drainTouches()
        if !uses.isEmpty { try transactions.write { try SessionRepository.touch(uses, on: $0) } }
    }

    // MARK: Ending sessions

    /// Ends the caller's session.
    func signOut(_ caller: Caller, client: AuditContext) throws {
        let now = clock.now().millis
        try transactions.write { db in
            if try SessionRepository.end(caller.session.id, at: now, reason: .signedOut, on: db) {
                try AuditLog.append(client.event(.sessionEnded, .success, userID: caller.user.id), at: now, on: db)
                try endHooks.run(caller.session.id, user: caller.user.id, now: now, on: db)
            }
        }
        changes.publish("session:\(caller.session.id.raw)")
    }

    /// The caller's live sessions, newest first (those past a lifetime left out).
    func list(_ caller: Caller) throws -> [SessionRecord] {
        policies.live(try transactions.read { try SessionRepository.live(caller.user.id, on: $0) }, now: clock.now())
    }

    /// The most sessions one page lists.
    static let pageLimit = 100

    /// A page of the caller's live sessions, newest first, and where the next
    /// page starts (nil: this was the last). A page may list fewer than
    /// `limit` when some of its sessions have just expired.
    /// - Throws: `CommonFailure.invalidFields` for a limit outside 1...100.
    func list(_ caller: Caller, after cursor: SessionCursor?, limit: Int) throws -> (
        sessions: [SessionRecord], next: SessionCursor?
    ) {
        guard (1...Self.pageLimit).contains(limit) else {
            throw CommonFailure.invalid("limit", "must be from 1 to \(Self.pageLimit)")
        }
        let rows = try transactions.read {
            try SessionRepository.live(caller.user.id, after: cursor, limit: limit + 1, on: $0)
        }
        let page = Array(rows.prefix(limit))
        let next = rows.count > limit ? page.last.map { SessionCursor(createdAt: $0.createdAt, id: $0.id) } : nil
        return (policies.live(page, now: clock.now()), next)
    }

    /// Ends one of the caller's sessions.
    /// - Throws: `SessionFailure.notFound` when it is not a live session of theirs.
    func revoke(_ id: SessionID, by caller: Caller, client: AuditContext) throws {
        let now = clock.now().millis
        try transactions.write { db in
            guard try SessionRepository.live(caller.user.id, on: db).contains(where: { $0.id == id }),
                try SessionRepository.end(id, at: now, reason: .revoked, on: db)
            else { throw SessionFailure.notFound }
            try AuditLog.append(
                client.event(.sessionRevoked, .success, userID: caller.user.id, detail: "id=\(id.raw)"), at: now, on: db
            )
            try endHooks.run(id, user: caller.user.id, now: now, on: db)
        }
        changes.publish("session:\(id.raw)")
    }
}

/// Refusals of the password sign-in.
enum SignInFailure: Error, Equatable {
    /// Wrong password or unknown email: one answer for both.
    case invalidCredentials
    /// Too many consecutive failures for this address: wait.
    case locked(retryAfter: Int)
    /// The right password for an account an administrator disabled.
    case disabled
    /// A passkey sign-in's assertion was not accepted (unknown passkey, a bad or spent challenge, no user verification).
    case passkeyRefused
}

/// Refusals about the caller's sessions.
enum SessionFailure: Error, Equatable {
    /// Not a live session of the caller's.
    case notFound
}
