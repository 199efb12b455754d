import API
import Core
import Crypto
import Foundation
import HTTP
import Store

/// Passwordless sign-in approved on the phone: the browser gives only the
/// email; the user's device gets the push and the number to match. To tell
/// nobody which addresses have a device, every address gets the same
/// answer: an address without one gets a decoy approval that no device
/// sees, which stays pending and expires like a real one, and the same
/// per-address limit (3 per 10 minutes) counts both. The session proves
/// possession of the device key only: AAL1, method `hwk`.
struct PushSignIn {
    let env: Environment

    func register(on router: inout Router) {
        router.add("POST", "/v1/sessions/push") { try start($0) }
        router.add("POST", "/v1/sessions/push/complete") { try complete($0) }
    }

    func start(_ request: Request) throws -> Response {
        let body = try request.decode(PushSignInRequest.self)
        guard let email = EmailAddress(body.email) else { throw APIError.invalidFields([.init(name: "email", reason: "is not a valid email address")]) }
        let context = AuditContext(request)
        let token = SessionToken.generate(env.random)
        let purpose = Purpose.signIn(pendingHash: SHA256.hex(token)).key
        let emailKey = SHA256.hex(email.value)
        let (number, choices) = PushApprovalRoutes.numbers(env)
        let id = env.newID()
        let ipLimit = env.configuration.signInPerIP
        let device = try env.transaction { db -> FactorRecord? in
            let now = env.nowMillis
            if let wait = try RateLimiter.take("signin:ip:\(ClientKey.of(request))", limit: ipLimit, nowMillis: now, on: db) {
                throw APIError.rateLimited(retryAfter: wait)
            }
            let recent = try db.queryOne("SELECT COUNT(*) AS n FROM push_approvals WHERE email_key = $1 AND created_at > $2",
                                         [.text(emailKey), .int(now - PushApprovalRoutes.window)])?.int("n") ?? 0
            guard recent < PushApprovalRoutes.maxPerWindow else { throw APIError.rateLimited(retryAfter: 600) }
            let user = try AccountRepository.find(email: email.value, on: db)
            let device = try user.map { try FactorRepository.list(userID: $0.id, on: db) }?.filter { $0.kind == "device" }
                .max { ($0.lastUsedAt ?? $0.createdAt) < ($1.lastUsedAt ?? $1.createdAt) }
            if let user, let device {
                try MFARepository.insertPending(tokenHash: SHA256.hex(token), userID: user.id, now: now, passwordless: true, on: db)
                try PushApprovalRoutes.insert(id: id, userID: user.id, factorID: device.id, emailKey: emailKey, purpose: purpose, number: number,
                                              choices: choices, context: context, now: now, on: db)
                try AuditLog.append(context.event(.pushSent, .success, userID: user.id, detail: "approval=\(id) device=\(device.id) passwordless"), at: now, on: db)
            } else {
                try PushApprovalRoutes.insert(id: id, userID: nil, factorID: "", emailKey: emailKey, purpose: purpose, number: number, choices: choices,
                                              context: context, now: now, on: db)
                try AuditLog.append(context.event(.pushDenied, .denied, userID: user?.id, detail: "passwordless push for an address without a device: decoy"),
                                    at: now, on: db)
            }
            return device
        }
        if let device { env.changes.publish("device:\(device.id)") }
        return .json(PushSignInStarted(pendingCredential: token, approvalID: id, number: number), status: 202)
    }

    func complete(_ request: Request) throws -> Response {
        let body = try request.decode(PushSignInComplete.self)
        guard SessionToken.isWellFormed(body.pendingCredential) else { throw APIError.invalidPendingCredential }
        let tokenHash = SHA256.hex(body.pendingCredential)
        let context = AuditContext(request)
        let issued = try env.transaction { db -> (token: String, session: SessionRecord)? in
            let now = env.nowMillis
            // The approval first: a decoy is never approved, so it fails here like an unapproved real one.
            guard let row = try db.queryOne("""
                UPDATE push_approvals SET consumed_at = $3
                WHERE id = $1 AND purpose = $2 AND status = 'approved' AND consumed_at IS NULL AND expires_at > $3
                RETURNING factor_id
                """, [.text(body.approvalID), .text(Purpose.signIn(pendingHash: tokenHash).key), .int(now)]),
                  try MFARepository.usePending(tokenHash: tokenHash, now: now, on: db),
                  let userID = try db.queryOne("SELECT user_id FROM mfa_factors WHERE id = $1", [.text(try row.text("factor_id"))])?.text("user_id")
            else { return nil }
            let deviceID = try row.text("factor_id")
            try FactorRepository.markUsed(id: deviceID, at: now, on: db)
            let proofs = SessionIssuer.Proofs(aal: .aal1, methods: ["hwk"], passwordVerifiedAt: nil, secondFactor: false, deviceID: deviceID)
            return try SessionIssuer(env: env).issue(userID: userID, proofs, context: context, detail: "passwordless push", on: db)
        }
        guard let issued else { throw APIError.invalidCode }
        return .json(SessionCreated(token: issued.token, session: issued.session.info(env)), status: 201)
    }
}
