import Foundation
import Store

extension AuthorizationFlow.Status: StoredValue {}

/// The `oidc_flows` table: authorization requests between the hosted pages,
/// and their codes (stored as SHA-256, spent by one conditional UPDATE so
/// two instances can never redeem one twice).
enum FlowRepository {
    private static let columns = "id, request, status, progress, created_at, expires_at"

    static func insert(_ flow: AuthorizationFlow, on db: any SQLConnection) throws {
        try db.execute(
            """
            INSERT INTO oidc_flows (id, client_id, request, status, progress, created_at, expires_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7)
            """,
            [
                .text(flow.id), .text(flow.request.clientID), .text(try json(flow.request)), flow.progress.status.sql,
                .text(try json(flow.progress)), .int(flow.createdAt), .int(flow.expiresAt),
            ])
    }

    /// A flow still waiting for its code; nil when unknown, expired or already past that.
    static func open(_ id: String, now: Int64, on db: any SQLConnection) throws -> AuthorizationFlow? {
        try db.queryOne(
            "SELECT \(columns) FROM oidc_flows WHERE id = $1 AND status = 'requested' AND expires_at > $2",
            [.text(id), .int(now)]
        ).map(record)
    }

    /// A flow in any state (for the page after it ended); nil when unknown or swept.
    static func find(_ id: String, on db: any SQLConnection) throws -> AuthorizationFlow? {
        try db.queryOne("SELECT \(columns) FROM oidc_flows WHERE id = $1", [.text(id)]).map(record)
    }

    /// The app and redirect URI of a flow in any state (for the page of a flow that ended), nil when it is gone.
    /// `paid`: the flow's payment (its authorization details) was approved and is on its way: its approval spent, or
    /// still approved with the code redeemed or still redeemable. Anything else (a code never redeemed and expired,
    /// an approval voided or expired) is not told as paid.
    /// `payment`: the flow asked to approve a payment (its authorization details name one), whatever became of it.
    static func origin(of id: String, now: Int64, on db: any SQLConnection) throws -> (
        clientName: String, redirectURI: String, paid: Bool, payment: Bool
    )? {
        guard
            let row = try db.queryOne(
                """
                SELECT f.request, f.progress, f.status, f.code_expires_at, c.name FROM oidc_flows f
                JOIN oidc_clients c ON c.id = f.client_id WHERE f.id = $1
                """, [.text(id)]),
            let request = try? JSONDecoder().decode(AuthorizationRequest.self, from: Data(try row.text("request").utf8))
        else { return nil }
        let progress = try? JSONDecoder().decode(
            AuthorizationFlow.Progress.self, from: Data(try row.text("progress").utf8))
        var paid = false
        if progress?.detailsApproved == true, let approval = progress?.detailsAuthorization,
            let state = try db.queryOne(
                "SELECT status, expires_at FROM authorizations WHERE id = $1", [.text(approval)])
        {
            let flowStatus = try row.text("status")
            let codeExpires = try row.optionalInt("code_expires_at") ?? 0
            let redeemable = flowStatus == "exchanged" || (flowStatus == "code_issued" && codeExpires > now)
            let approvalStatus = try state.text("status")
            let approvalExpires = try state.int("expires_at")
            paid = approvalStatus == "used" || (approvalStatus == "approved" && approvalExpires > now && redeemable)
        }
        return (try row.text("name"), request.redirectURI, paid, request.authorizationDetails?.payment != nil)
    }

    /// Saves what the flow learned (only while it waits for its code).
    static func save(_ flow: AuthorizationFlow, on db: any SQLConnection) throws {
        try db.execute(
            "UPDATE oidc_flows SET progress = $2 WHERE id = $1 AND status = 'requested'",
            [.text(flow.id), .text(try json(flow.progress))])
    }

    /// Ends a flow whose client was answered without a code.
    static func end(_ id: String, on db: any SQLConnection) throws {
        try db.execute("UPDATE oidc_flows SET status = 'answered' WHERE id = $1 AND status = 'requested'", [.text(id)])
    }

    /// Records the code (its hash) and who it is for; false when the flow no longer waits for one.
    static func issueCode(
        _ id: String, codeHash: String, expiresAt: Int64, userID: String, sessionID: String, on db: any SQLConnection
    ) throws -> Bool {
        try db.execute(
            """
            UPDATE oidc_flows SET status = 'code_issued', code_hash = $2, code_expires_at = $3, user_id = $4, session_id = $5
            WHERE id = $1 AND status = 'requested'
            """, [.text(id), .text(codeHash), .int(expiresAt), .text(userID), .text(sessionID)]) == 1
    }

    /// The flow a code was issued for, whatever its state.
    struct Redemption {
        let flow: AuthorizationFlow
        let clientID: String
        let userID: String?
        let sessionID: String?
        let codeExpiresAt: Int64?
        let grantID: String?
    }

    static func find(codeHash: String, on db: any SQLConnection) throws -> Redemption? {
        guard
            let row = try db.queryOne(
                "SELECT \(columns), client_id, user_id, session_id, code_expires_at, grant_id FROM oidc_flows WHERE code_hash = $1",
                [.text(codeHash)])
        else { return nil }
        return Redemption(
            flow: try record(row), clientID: try row.text("client_id"), userID: try row.optionalText("user_id"),
            sessionID: try row.optionalText("session_id"), codeExpiresAt: try row.optionalInt("code_expires_at"),
            grantID: try row.optionalText("grant_id"))
    }

    /// Spends the code once: true for the one caller that moved it from issued to exchanged.
    static func exchange(codeHash: String, grantID: String, on db: any SQLConnection) throws -> Bool {
        try db.execute(
            "UPDATE oidc_flows SET status = 'exchanged', grant_id = $2 WHERE code_hash = $1 AND status = 'code_issued'",
            [.text(codeHash), .text(grantID)]) == 1
    }

    /// Forgets flows past their lifetime (housekeeping); returns how many.
    @discardableResult
    static func deleteExpired(before now: Int64, on db: any SQLConnection) throws -> Int {
        try db.execute("DELETE FROM oidc_flows WHERE expires_at < $1", [.int(now)])
    }

    private static func json(_ value: some Encodable) throws -> String {
        String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
    }

    private static func record(_ r: Row) throws -> AuthorizationFlow {
        let decoder = JSONDecoder()
        do {
            var progress = try decoder.decode(AuthorizationFlow.Progress.self, from: Data(try r.text("progress").utf8))
            progress.status = try r.value("status")
            return AuthorizationFlow(
                id: try r.text("id"),
                request: try decoder.decode(AuthorizationRequest.self, from: Data(try r.text("request").utf8)),
                progress: progress, createdAt: try r.int("created_at"), expiresAt: try r.int("expires_at"))
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.decoding, detail: "an authorization flow's JSON does not decode")
        }
    }
}
