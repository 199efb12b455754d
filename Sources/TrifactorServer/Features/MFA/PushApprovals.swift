import API
import Core
import Crypto
import Foundation
import HTTP
import Store

/// Sign-in approved on the phone, with number matching. The browser's
/// sign-in shows a two-digit number; the enrolled device, polling for its
/// pending approvals (long-poll: no server thread waits), shows where the
/// sign-in comes from and three numbers, and answers with a signed decision.
/// A wrong number denies the sign-in and is audited as a possible fatigue
/// attack. Approvals live 2 minutes; at most 3 pushes per user per 10 minutes.
struct PushApprovalRoutes {
    let env: Environment
    static let lifetime: Int64 = 2 * 60_000
    static let maxPerWindow = 3
    static let window: Int64 = 10 * 60_000

    func register(on router: inout Router) {
        router.add("GET", "/v1/devices/:id/approvals") { try pending($0) }
        router.add("POST", "/v1/devices/:id/approvals/:approval") { try decide($0) }
        router.add("GET", "/v1/mfa/sign-in/approvals/:approval") { try state($0) }
    }

    /// Creates an approval for a sign-in (called by the sign-in challenge for a device hint).
    /// - Returns: nil when the user had 3 pushes in the last 10 minutes (then only the device signature path is offered).
    /// The number to match and three choices holding it, shuffled.
    static func numbers(_ env: Environment) -> (number: Int, choices: [Int]) {
        let number = 10 + Int(env.random.uniform(90))
        var choices = [number]
        while choices.count < 3 {
            let other = 10 + Int(env.random.uniform(90))
            if !choices.contains(other) { choices.append(other) }
        }
        for i in stride(from: 2, to: 0, by: -1) { choices.swapAt(i, Int(env.random.uniform(UInt32(i + 1)))) }
        return (number, choices)
    }

    /// Writes an approval row; `factorID` empty and `userID` nil for a decoy
    /// (a push for an address without a device, which no device ever sees).
    static func insert(id: String, userID: String?, factorID: String, emailKey: String?, purpose: String, number: Int, choices: [Int],
                       context: AuditContext, now: Int64, on db: any SQLConnection) throws {
        try db.execute("""
            INSERT INTO push_approvals (id, user_id, factor_id, purpose, number, choices, ip, user_agent, status, created_at, expires_at, email_key)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', $9, $10, $11)
            """, [.text(id), SQLValue(userID), .text(factorID), .text(purpose), .int(Int64(number)),
                  .text(choices.map(String.init).joined(separator: ",")), .text(context.ip), SQLValue(context.userAgent.map { String($0.prefix(200)) }),
                  .int(now), .int(now + lifetime), SQLValue(emailKey)])
    }

    static func create(env: Environment, factor: FactorRecord, purpose: Purpose, context: AuditContext) throws -> (id: String, number: Int)? {
        let (number, choices) = numbers(env)
        let id = env.newID()
        let created = try env.transaction { db -> Bool in
            let now = env.nowMillis
            try db.execute("UPDATE users SET id = id WHERE id = $1", [.text(factor.userID)])
            let recent = try db.queryOne("SELECT COUNT(*) AS n FROM push_approvals WHERE user_id = $1 AND created_at > $2",
                                         [.text(factor.userID), .int(now - window)])?.int("n") ?? 0
            guard recent < maxPerWindow else { return false }
            try insert(id: id, userID: factor.userID, factorID: factor.id, emailKey: nil, purpose: purpose.key, number: number, choices: choices,
                       context: context, now: now, on: db)
            try AuditLog.append(context.event(.pushSent, .success, userID: factor.userID, detail: "approval=\(id) device=\(factor.id)"), at: now, on: db)
            return true
        }
        guard created else {
            try env.audit(context.event(.pushDenied, .denied, userID: factor.userID, detail: "push limit reached: 3 per 10 minutes"))
            return nil
        }
        env.changes.publish("device:\(factor.id)")
        return (id, number)
    }

    /// Spends an approved approval for `purpose` and `factor`; false otherwise.
    static func consume(env: Environment, approvalID: String, factor: FactorRecord, purpose: Purpose) throws -> Bool {
        try env.transaction { db in
            try db.execute("""
                UPDATE push_approvals SET consumed_at = $4
                WHERE id = $1 AND factor_id = $2 AND purpose = $3 AND status = 'approved' AND consumed_at IS NULL AND expires_at > $4
                """, [.text(approvalID), .text(factor.id), .text(purpose.key), .int(env.nowMillis)]) == 1
        }
    }

    /// The device, authenticated by a signature over `poll` and its id with a
    /// timestamp within a minute: `X-Trifactor-Device-Time`, `X-Trifactor-Device-Signature`.
    private func device(_ request: Request) throws -> FactorRecord {
        let id = request.parameters["id"] ?? ""
        guard let time = request.header("x-trifactor-device-time").flatMap(Int64.init), (0...4_102_444_800).contains(time),
              let signature = request.header("x-trifactor-device-signature"),
              abs(time - env.nowMillis / 1000) <= 30,
              let factor = try env.read({ db in
                  try db.queryOne("SELECT user_id FROM mfa_factors WHERE id = $1 AND kind = 'device'", [.text(id)])
                      .flatMap { try FactorRepository.find(id: id, userID: try $0.text("user_id"), on: db) }
              }),
              let key = factor.publicKey,
              DeviceKeyFactor.verify(signature: signature, publicKey: key, message: DeviceKeyFactor.message(purpose: "poll", challenge: "\(id):\(time)", action: nil))
        else { throw APIError.unauthenticated }
        return factor
    }

    func pending(_ request: Request) throws -> Response {
        let factor = try device(request)
        let approvals = try env.read { db in
            try db.query("""
                SELECT id, ip, user_agent, created_at, expires_at, choices FROM push_approvals
                WHERE factor_id = $1 AND status = 'pending' AND expires_at > $2 ORDER BY created_at
                """, [.text(factor.id), .int(env.nowMillis)]).map { row in
                PendingApproval(approvalID: try row.text("id"), ip: try row.optionalText("ip"), userAgent: try row.optionalText("user_agent"),
                                createdAt: Date(millis: try row.int("created_at")), expiresAt: Date(millis: try row.int("expires_at")),
                                choices: try row.text("choices").split(separator: ",").compactMap { Int($0) })
            }
        }
        let wait = min(25, max(0, Double(request.query["wait"] ?? "0") ?? 0))
        if approvals.isEmpty && wait > 0 {
            return .wait(key: "device:\(factor.id)", timeout: wait, onTimeout: .json(PendingApprovals(approvals: [])))
        }
        return .json(PendingApprovals(approvals: approvals))
    }

    func decide(_ request: Request) throws -> Response {
        let factor = try device(request)
        let body = try request.decode(ApprovalDecision.self)
        guard body.decision == "approve" || body.decision == "deny" else {
            throw APIError.invalidFields([.init(name: "decision", reason: "must be approve or deny")])
        }
        let approvalID = request.parameters["approval"] ?? ""
        let message = DeviceKeyFactor.message(purpose: "push", challenge: approvalID, action: "\(body.decision):\(body.number)")
        let context = AuditContext(request)
        guard let key = factor.publicKey, DeviceKeyFactor.verify(signature: body.signature, publicKey: key, message: message) else {
            try env.audit(context.event(.pushDenied, .failure, userID: factor.userID, detail: "approval=\(approvalID) decision with a bad signature refused"))
            throw APIError.unauthenticated
        }
        let status = try env.transaction { db -> String in
            let now = env.nowMillis
            guard let row = try db.queryOne("SELECT number FROM push_approvals WHERE id = $1 AND factor_id = $2 AND status = 'pending' AND expires_at > $3",
                                            [.text(approvalID), .text(factor.id), .int(now)]) else { throw APIError.authorizationNotFound }
            let right = Int(try row.int("number")) == body.number
            let status = body.decision == "approve" && right ? "approved" : "denied"
            guard try db.execute("UPDATE push_approvals SET status = $2, decided_at = $3 WHERE id = $1 AND status = 'pending'",
                                 [.text(approvalID), .text(status), .int(now)]) == 1 else { throw APIError.authorizationNotFound }
            if body.decision == "approve" && !right {
                // The whole sign-in ends: its pending credential and any other push for it.
                let purpose = try db.queryOne("SELECT purpose FROM push_approvals WHERE id = $1", [.text(approvalID)])?.text("purpose") ?? ""
                if purpose.hasPrefix("signin:") {
                    try db.execute("UPDATE pending_credentials SET used_at = $2 WHERE token_hash = $1 AND used_at IS NULL",
                                   [.text(String(purpose.dropFirst("signin:".count))), .int(now)])
                    try db.execute("UPDATE push_approvals SET status = 'denied', decided_at = $2 WHERE purpose = $1 AND status = 'pending'",
                                   [.text(purpose), .int(now)])
                }
                try AuditLog.append(context.event(.pushWrongNumber, .denied, userID: factor.userID,
                                                  detail: "approval=\(approvalID) wrong number picked: possible push fatigue attack; sign-in ended"), at: now, on: db)
            } else {
                try AuditLog.append(context.event(status == "approved" ? .pushApproved : .pushDenied, status == "approved" ? .success : .denied,
                                                  userID: factor.userID, detail: "approval=\(approvalID)"), at: now, on: db)
            }
            return status
        }
        env.changes.publish("approval:\(approvalID)")
        return .json(ApprovalState(status: status))
    }

    /// The browser's view, with the pending credential that started it; `?wait=N` long-polls.
    func state(_ request: Request) throws -> Response {
        let approvalID = request.parameters["approval"] ?? ""
        guard let credential = request.query["pending_credential"], SessionToken.isWellFormed(credential) else { throw APIError.invalidPendingCredential }
        let purpose = Purpose.signIn(pendingHash: SHA256.hex(credential)).key
        guard let row = try env.read({ db in
            try db.queryOne("SELECT status, expires_at FROM push_approvals WHERE id = $1 AND purpose = $2", [.text(approvalID), .text(purpose)])
        }) else { throw APIError.authorizationNotFound }
        var status = try row.text("status")
        let expiresAt = try row.int("expires_at")
        if status == "pending" && expiresAt <= env.nowMillis { status = "expired" }
        let wait = min(25, max(0, Double(request.query["wait"] ?? "0") ?? 0))
        if status == "pending" && wait > 0 {
            return .wait(key: "approval:\(approvalID)", timeout: wait, onTimeout: .json(ApprovalState(status: "pending")))
        }
        return .json(ApprovalState(status: status))
    }
}
