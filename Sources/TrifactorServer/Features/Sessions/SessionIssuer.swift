import Core
import Crypto
import Store

/// The one place sessions are born: the token (shown once, stored as its
/// SHA-256), the record with its level, methods and proof times, and the
/// audit entry, all in the caller's transaction.
struct SessionIssuer: Sendable {
    let random: RandomSource

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
    func issue(userID: UserID, _ proofs: Proofs, client: AuditContext, detail: String, now: Int64,
               on db: any SQLConnection) throws -> (token: String, session: SessionRecord) {
        let token = SessionToken.generate(random)
        let session = SessionRecord(id: .random(using: random), userID: userID, aal: proofs.aal, methods: proofs.methods, createdAt: now,
                                    lastSeenAt: now, passwordVerifiedAt: proofs.passwordVerifiedAt, mfaVerifiedAt: proofs.secondFactor ? now : nil,
                                    ip: client.ip, userAgent: client.userAgent, deviceID: proofs.deviceID)
        try SessionRepository.insert(session, tokenHash: SHA256.hex(token), on: db)
        let methods = proofs.methods.map(\.rawValue).joined(separator: ",")
        try AuditLog.append(client.event(.signInSucceeded, .success, userID: userID,
                                         detail: "aal=\(proofs.aal.rawValue) methods=\(methods) \(detail)"), at: now, on: db)
        return (token, session)
    }
}
