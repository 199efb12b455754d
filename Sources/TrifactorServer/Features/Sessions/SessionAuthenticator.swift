import Core
import Crypto
import Foundation
import HTTP
import Store

/// Turns a bearer token into the live session and its user, for every
/// endpoint that needs one.
struct SessionAuthenticator {
    let env: Environment

    struct Authenticated {
        let session: SessionRecord
        let user: UserRecord
    }

    /// The session of `request`'s bearer token, its use recorded (in memory,
    /// written in batches): from the session cache while its entry is fresh,
    /// else from a read-only transaction (no write lock), and a write only
    /// when the session has just expired.
    /// - Returns: the session and user, or `APIError.unauthenticated` for a
    ///   missing, unknown or ended token, `APIError.sessionExpired` once a
    ///   lifetime has run out.
    func authenticate(_ request: Request) throws -> Result<Authenticated, APIError> {
        if let cached = cached(request) { return .success(cached) }
        if case .done(let result) = try env.read({ try check(request, on: $0, canWrite: false) }) { return result }
        guard case .done(let result) = try env.transaction({ try check(request, on: $0, canWrite: true) }) else {
            return .failure(.unauthenticated)
        }
        return result
    }

    /// The session from the cache alone (no I/O, for the HTTP thread): nil
    /// when it is not cached, or has expired (the database path records that).
    func cached(_ request: Request) -> Authenticated? {
        guard let token = request.bearerToken, SessionToken.isWellFormed(token) else { return nil }
        let tokenHash = SHA256.hex(token)
        guard let entry = env.sessionCache.lookup(tokenHash) else { return nil }
        let now = env.clock.now()
        let policy = env.sessionPolicy(aal: entry.session.aal)
        let lastSeen = Date(millis: entry.session.lastSeenAt)
        guard !policy.isExpired(created: Date(millis: entry.session.createdAt), lastSeen: lastSeen, now: now) else { return nil }
        var session = entry.session
        if policy.shouldRecordUse(lastSeen: lastSeen, now: now) {
            env.sessionCache.touch(tokenHash, sessionID: session.id, at: now.millis)
            session.lastSeenAt = now.millis
        }
        return Authenticated(session: session, user: entry.user)
    }

    /// The same inside a write transaction the caller already holds.
    func authenticate(_ request: Request, on db: any SQLConnection) throws -> Result<Authenticated, APIError> {
        guard case .done(let result) = try check(request, on: db, canWrite: true) else { return .failure(.unauthenticated) }
        return result
    }

    private enum Check {
        case done(Result<Authenticated, APIError>)
        case needsWrite
    }

    private func check(_ request: Request, on db: any SQLConnection, canWrite: Bool) throws -> Check {
        guard let token = request.bearerToken, SessionToken.isWellFormed(token) else { return .done(.failure(.unauthenticated)) }
        let tokenHash = SHA256.hex(token)
        guard let session = try SessionRepository.find(tokenHash: tokenHash, on: db) else { return .done(.failure(.unauthenticated)) }
        if session.endedAt != nil {
            return .done(.failure(session.endReason == "expired" ? .sessionExpired : .unauthenticated))
        }
        let now = env.clock.now()
        let policy = env.sessionPolicy(aal: session.aal)
        let created = Date(millis: session.createdAt), lastSeen = Date(millis: session.lastSeenAt)
        if policy.isExpired(created: created, lastSeen: lastSeen, now: now) {
            guard canWrite else { return .needsWrite }
            // Recorded once, in this transaction, which the caller commits before answering 401.
            if try SessionRepository.end(id: session.id, at: now.millis, reason: "expired", on: db) {
                try AuditLog.append(AuditContext(request).event(.sessionExpired, .success, userID: session.userID), at: now.millis, on: db)
            }
            return .done(.failure(.sessionExpired))
        }
        guard let user = try AccountRepository.find(id: session.userID, on: db) else { return .done(.failure(.unauthenticated)) }
        var current = session
        env.sessionCache.store(tokenHash, session: session, user: user)
        if policy.shouldRecordUse(lastSeen: lastSeen, now: now) {
            // Written with the next batch of uses, not in this request.
            env.sessionCache.touch(tokenHash, sessionID: session.id, at: now.millis)
            current.lastSeenAt = now.millis
        }
        return .done(.success(Authenticated(session: current, user: user)))
    }
}

/// Session tokens: 256 random bits, base64url (43 characters), shown once.
enum SessionToken {
    /// A new token.
    static func generate(_ random: RandomSource) -> String { Base64URL.encode(random.bytes(32)) }

    /// Whether `token` has the shape of one of ours (so junk never reaches the database).
    static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == 43 && token.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c == 0x2d || c == 0x5f
        }
    }
}
