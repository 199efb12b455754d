import API
import Core
import Foundation
import Store

/// The `push_approvals` table: sign-ins (and password resets) pushed to a
/// device for approval with a number to match, and the decoys a passwordless
/// push gets for an address without a device (no user, no factor).
enum PushRepository {
    /// An approval waiting for a device's decision, as stored.
    struct Waiting: Sendable {
        let id: String
        let ip: String?
        let userAgent: String?
        let createdAt: Int64
        let expiresAt: Int64
        let choices: [Int]
        let purpose: Purpose
        /// What the device shows beside the numbers: a client's `binding_message` (OpenID CIBA), or the app asking for a
        /// payment.
        let message: String?
        /// The bound action a payment's approval is for, which the device shows and signs the hash of.
        let action: [String: JSONScalar]?
    }

    /// Writes an approval row, pending for `PushService.lifetime`; no user and
    /// no factor for a decoy (a push for an address without a device, which no
    /// device ever sees).
    static func insert(
        id: ApprovalID, userID: UserID?, factorID: FactorID?, emailKey: String?, purpose: Purpose, number: Int,
        choices: [Int], message: String? = nil, action: [String: JSONScalar]? = nil,
        lifetime: Int64 = PushService.lifetime, client: AuditContext, now: Int64, on db: any SQLConnection
    ) throws {
        let actionJSON = try action.map { action -> String in
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            return String(decoding: try encoder.encode(action), as: UTF8.self)
        }
        try db.execute(
            """
            INSERT INTO push_approvals (id, user_id, factor_id, purpose, number, choices, ip, user_agent, status, created_at, expires_at, email_key, message, action)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
            """,
            [
                id.sql, SQLValue(userID?.raw), .text(factorID?.raw ?? ""), purpose.sql, .int(Int64(number)),
                StoredList.encode(choices.map(String.init)), .text(client.ip),
                SQLValue(client.userAgent.map { String($0.prefix(200)) }),
                ApprovalStatus.pending.sql, .int(now), .int(now + lifetime), SQLValue(emailKey), SQLValue(message),
                SQLValue(actionJSON),
            ])
    }

    /// The budgets pushes are counted in: apps' requests (OpenID CIBA), approvals of bound actions (a payment) and
    /// the user's own sign-ins are counted apart, so an app that asks too often, or a payment pushed three times,
    /// never uses up the pushes the user signs in with.
    enum Budget: Sendable {
        case signIn, approval, backchannel

        /// The budget a push for `purpose` is counted in.
        init(_ purpose: Purpose) {
            switch purpose {
            case .backchannel: self = .backchannel
            case .authorization: self = .approval
            case .signIn, .stepUp, .passwordReset: self = .signIn
            }
        }

        /// The condition on `purpose` that selects this budget's pushes.
        var condition: String {
            switch self {
            case .backchannel: "purpose LIKE 'ciba:%'"
            case .approval: "purpose LIKE 'authz:%'"
            // Passwordless pushes (decoys too) are counted per address (`count(emailKey:)`): anyone who knows the
            // email can ask for one, so they never use up the pushes of the user's own sign-ins.
            case .signIn: "purpose NOT LIKE 'ciba:%' AND purpose NOT LIKE 'authz:%' AND email_key IS NULL"
            }
        }
    }

    /// How many pushes of `budget` went to the user's devices after `since`.
    static func count(userID: UserID, since: Int64, budget: Budget, on db: any SQLConnection) throws -> Int64 {
        try db.queryOne(
            """
            SELECT COUNT(*) AS n FROM push_approvals WHERE user_id = $1 AND created_at > $2 AND \(budget.condition)
            """, [userID.sql, .int(since)])?.int("n") ?? 0
    }

    /// How many passwordless pushes (decoys included) an address got after `since`.
    static func count(emailKey: String, since: Int64, on db: any SQLConnection) throws -> Int64 {
        try db.queryOne(
            "SELECT COUNT(*) AS n FROM push_approvals WHERE email_key = $1 AND created_at > $2",
            [.text(emailKey), .int(since)])?.int("n") ?? 0
    }

    /// Spends an approved, unexpired approval of the factor `factorID` for `purpose`; false otherwise.
    static func consume(_ id: ApprovalID, factorID: FactorID, purpose: Purpose, now: Int64, on db: any SQLConnection)
        throws -> Bool
    {
        try db.execute(
            """
            UPDATE push_approvals SET consumed_at = $4
            WHERE id = $1 AND factor_id = $2 AND purpose = $3 AND status = 'approved' AND consumed_at IS NULL AND expires_at > $4
            """, [id.sql, factorID.sql, purpose.sql, .int(now)]) == 1
    }

    /// Spends an approved, unexpired approval for `purpose`, whichever device approved it; returns that device and
    /// the approval's user (nil for a decoy, which is never approved anyway), or nil when there is no such approval.
    static func consume(_ id: ApprovalID, purpose: Purpose, now: Int64, on db: any SQLConnection) throws -> (
        factorID: FactorID, userID: UserID?
    )? {
        try db.queryOne(
            """
            UPDATE push_approvals SET consumed_at = $3
            WHERE id = $1 AND purpose = $2 AND status = 'approved' AND consumed_at IS NULL AND expires_at > $3
            RETURNING factor_id, user_id
            """, [id.sql, purpose.sql, .int(now)]
        ).map { (try $0.id("factor_id"), try $0.optionalID("user_id")) }
    }

    /// The approvals waiting for the device `factorID`, oldest first.
    /// - Throws: `StoreError` `.decoding` for a stored choice or purpose the program does not know.
    static func waiting(for factorID: FactorID, now: Int64, on db: any SQLConnection) throws -> [Waiting] {
        try db.query(
            """
            SELECT id, ip, user_agent, created_at, expires_at, choices, purpose, message, action FROM push_approvals
            WHERE factor_id = $1 AND status = 'pending' AND expires_at > $2 ORDER BY created_at
            """, [factorID.sql, .int(now)]
        ).map { row in
            Waiting(
                id: try row.text("id"), ip: try row.optionalText("ip"), userAgent: try row.optionalText("user_agent"),
                createdAt: try row.int("created_at"), expiresAt: try row.int("expires_at"),
                choices: try StoredList.decode(try row.text("choices")).map { item in
                    guard let n = Int(item) else {
                        throw StoreError(.decoding, detail: "choice \(item.prefix(8)) is not a number")
                    }
                    return n
                }, purpose: try Purpose(stored: try row.text("purpose")), message: try row.optionalText("message"),
                action: try row.optionalText("action").map { text in
                    do {
                        return try JSONDecoder().decode([String: JSONScalar].self, from: Data(text.utf8))
                    } catch {
                        throw StoreError(.decoding, detail: "a push approval's action is not a JSON object")
                    }
                })
        }
    }

    /// The number to match and the stored purpose of the approval `id` while it waits for the device `factorID`.
    static func pending(_ id: ApprovalID, factorID: FactorID, now: Int64, on db: any SQLConnection) throws -> (
        number: Int64, purpose: String
    )? {
        try db.queryOne(
            "SELECT number, purpose FROM push_approvals WHERE id = $1 AND factor_id = $2 AND status = 'pending' AND expires_at > $3",
            [id.sql, factorID.sql, .int(now)]
        ).map { (try $0.int("number"), try $0.text("purpose")) }
    }

    /// The stored purpose of the approval `id` of the device `factorID`, whatever its state.
    static func purpose(_ id: ApprovalID, factorID: FactorID, on db: any SQLConnection) throws -> String? {
        try db.queryOne(
            "SELECT purpose FROM push_approvals WHERE id = $1 AND factor_id = $2", [id.sql, factorID.sql]
        )?.text("purpose")
    }

    /// Records the decision on a pending approval; false when it was decided meanwhile.
    static func decide(_ id: ApprovalID, _ status: ApprovalStatus, at now: Int64, on db: any SQLConnection) throws
        -> Bool
    {
        try db.execute(
            "UPDATE push_approvals SET status = $2, decided_at = $3 WHERE id = $1 AND status = 'pending'",
            [id.sql, status.sql, .int(now)]) == 1
    }

    /// Denies every pending push for `purpose` (its sign-in or reset just ended).
    static func denyPending(for purpose: Purpose, now: Int64, on db: any SQLConnection) throws {
        try db.execute(
            "UPDATE push_approvals SET status = 'denied', decided_at = $2 WHERE purpose = $1 AND status = 'pending'",
            [purpose.sql, .int(now)])
    }

    /// Denies every pending push to the user's devices (their password was just reset).
    static func denyPending(of userID: UserID, now: Int64, on db: any SQLConnection) throws {
        try db.execute(
            """
            UPDATE push_approvals SET status = 'denied', decided_at = $2 WHERE user_id = $1 AND status = 'pending'
            """, [userID.sql, .int(now)])
    }

    /// The state of the approval `id` made for `purpose`, and when it expires.
    static func state(_ id: ApprovalID, purpose: Purpose, on db: any SQLConnection) throws -> (
        status: ApprovalStatus, expiresAt: Int64
    )? {
        try state(id, purpose: purpose, or: purpose, on: db)
    }

    /// The state of the approval `id` made for either purpose, and when it expires.
    static func state(_ id: ApprovalID, purpose: Purpose, or other: Purpose, on db: any SQLConnection) throws -> (
        status: ApprovalStatus, expiresAt: Int64
    )? {
        try db.queryOne(
            "SELECT status, expires_at FROM push_approvals WHERE id = $1 AND purpose IN ($2, $3)",
            [id.sql, purpose.sql, other.sql]
        )
        .map { (try $0.value("status"), try $0.int("expires_at")) }
    }
}
