import Core
import Crypto
import Store

/// The one place sessions are born: the token (shown once, stored as its
/// SHA-256), the record with its level, methods and proof times, and the
/// audit entry, all in the caller's transaction.
struct SessionIssuer {
    let env: Environment

    /// What a sign-in proved.
    struct Proofs {
        var aal: AssuranceLevel
        /// RFC 8176 names, in the order proven.
        var methods: [String]
        /// When the password was checked (nil for passwordless sign-ins).
        var passwordVerifiedAt: Int64?
        /// Whether a second factor was proven now.
        var secondFactor: Bool
        /// The device key that proved it, if one did.
        var deviceID: String? = nil
    }

    func issue(userID: String, _ proofs: Proofs, context: AuditContext, detail: String, on db: any SQLConnection) throws -> (token: String, session: SessionRecord) {
        let now = env.nowMillis
        let token = SessionToken.generate(env.random)
        var session = SessionRecord(id: env.newID(), userID: userID, aal: proofs.aal.rawValue, methods: proofs.methods, createdAt: now,
                                    lastSeenAt: now, endedAt: nil, endReason: nil, mfaVerifiedAt: proofs.secondFactor ? now : nil)
        session.deviceID = proofs.deviceID
        try SessionRepository.insert(session, tokenHash: SHA256.hex(token), passwordVerifiedAt: proofs.passwordVerifiedAt, ip: context.ip,
                                     userAgent: context.userAgent, on: db)
        try AuditLog.append(context.event(.signInSucceeded, .success, userID: userID,
                                          detail: "aal=\(proofs.aal.rawValue) methods=\(proofs.methods.joined(separator: ",")) \(detail)"), at: now, on: db)
        return (token, session)
    }
}
