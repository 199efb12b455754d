import API
import Core
import Foundation

/// A stored session (its token is never stored, only the token's SHA-256).
struct SessionRecord: Sendable {
    let id: SessionID
    let userID: UserID
    var aal: AssuranceLevel
    /// RFC 8176 methods, in the order proven.
    var methods: [AuthMethod]
    let createdAt: Int64
    var lastSeenAt: Int64
    var endedAt: Int64? = nil
    var endReason: SessionEndReason? = nil
    var passwordVerifiedAt: Int64? = nil
    var mfaVerifiedAt: Int64? = nil
    var ip: String? = nil
    var userAgent: String? = nil
    /// The device key that proved the second factor, if one did.
    var deviceID: FactorID? = nil

    /// Whether a password or second-factor proof was made within `window` seconds of `now`.
    func freshProof(now: Int64, window: TimeInterval) -> Bool {
        max(passwordVerifiedAt ?? 0, mfaVerifiedAt ?? 0) >= now - Int64(window * 1000)
    }

    /// Whether a second-factor proof was made within `window` seconds of `now`.
    func freshSecondFactor(now: Int64, window: TimeInterval) -> Bool {
        (mfaVerifiedAt ?? 0) >= now - Int64(window * 1000)
    }

    /// The session as the API shows it, given the lifetimes of its level.
    func info(_ policies: SessionPolicies) -> SessionInfo {
        SessionInfo(
            id: id.raw, aal: aal.rawValue, methods: methods.map(\.rawValue), createdAt: Date(millis: createdAt),
            expiresAt: policies[aal].expiry(created: Date(millis: createdAt), lastSeen: Date(millis: lastSeenAt)))
    }
}

/// The lifetimes of sessions per assurance level.
struct SessionPolicies: Sendable {
    var aal1: SessionPolicy
    var aal2: SessionPolicy

    subscript(_ level: AssuranceLevel) -> SessionPolicy { level >= .aal2 ? aal2 : aal1 }

    /// The sessions whose idle timeout and lifetime have not run out at `now`
    /// (ended ones are still rows until the session-use task or housekeeping marks them).
    func live(_ sessions: [SessionRecord], now: Date) -> [SessionRecord] {
        sessions.filter {
            !self[$0.aal].isExpired(
                created: Date(millis: $0.createdAt), lastSeen: Date(millis: $0.lastSeenAt), now: now)
        }
    }
}

/// Who is calling: the live session of the request's bearer token and its user,
/// established once, before the handler.
struct Caller: Sendable {
    let user: UserRecord
    let session: SessionRecord
    let tokenHash: String
}

/// Session tokens: 256 random bits, base64url (43 characters), shown once.
enum SessionToken {
    /// A new token.
    static func generate(_ random: RandomSource) -> String { Base64URL.encode(random.bytes(32)) }

    /// Whether `token` has the shape of one of ours (so junk never reaches the database).
    static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == 43
            && token.utf8.allSatisfy { c in
                (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c == 0x2d
                    || c == 0x5f
            }
    }
}
