import Core
import Foundation
import Store

/// A back-channel authentication request (OpenID CIBA) as stored: keyed by the SHA-256 of its `auth_req_id`.
struct BackchannelRequest: Sendable, Equatable {
    enum Status: String, Sendable { case pending, denied, issued }

    let id: String
    let clientID: String
    /// nil when the hint named no account that can approve (the request answers as any other, then expires).
    let userID: String?
    let scopes: [String]
    let acr: ACR?
    let bindingMessage: String?
    /// The push approval on the user's device; for a user reached by a text, the approval the link decides (on the
    /// phone factor, which no device lists).
    let approvalID: String?
    var status: Status
    var interval: Int
    var polledAt: Int64?
    let createdAt: Int64
    let expiresAt: Int64
    /// The SHA-256 of the code of the link texted to the user (nil when no text was sent).
    var linkHash: String? = nil
}

/// The `oidc_backchannel_requests` table.
enum BackchannelRepository {
    private static let columns =
        "id, client_id, user_id, scope, acr, binding_message, approval_id, status, interval_seconds, polled_at, created_at, expires_at, link_hash"

    static func insert(_ r: BackchannelRequest, on db: any SQLConnection) throws {
        try db.execute(
            "INSERT INTO oidc_backchannel_requests (\(columns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
            [
                .text(r.id), .text(r.clientID), SQLValue(r.userID), .text(r.scopes.joined(separator: " ")),
                SQLValue(r.acr?.rawValue), SQLValue(r.bindingMessage), SQLValue(r.approvalID), .text(r.status.rawValue),
                .int(Int64(r.interval)), SQLValue(r.polledAt), .int(r.createdAt), .int(r.expiresAt),
                SQLValue(r.linkHash),
            ])
    }

    /// The request a texted link's code (its SHA-256) names, in any state.
    static func find(linkHash: String, on db: any SQLConnection) throws -> BackchannelRequest? {
        try db.queryOne("SELECT \(columns) FROM oidc_backchannel_requests WHERE link_hash = $1", [.text(linkHash)])
            .map(record)
    }

    static func find(_ id: String, on db: any SQLConnection) throws -> BackchannelRequest? {
        try db.queryOne("SELECT \(columns) FROM oidc_backchannel_requests WHERE id = $1", [.text(id)]).map(record)
    }

    /// Records a poll at `now` when the last one is at least the interval ago; false for a poll too soon. (`$2` stands
    /// alone against the column: PostgreSQL types an untyped parameter from its expression, and `$2 - integer`
    /// would make it a 32-bit integer that a time in milliseconds overflows.)
    static func poll(_ id: String, at now: Int64, on db: any SQLConnection) throws -> Bool {
        try db.execute(
            """
            UPDATE oidc_backchannel_requests SET polled_at = $2
            WHERE id = $1 AND (polled_at IS NULL OR polled_at + interval_seconds * 1000 <= $2)
            """, [.text(id), .int(now)]) == 1
    }

    /// A poll too soon: the interval grows by 5 seconds (CIBA Core §11), counted from this poll.
    static func slowDown(_ id: String, at now: Int64, on db: any SQLConnection) throws {
        try db.execute(
            "UPDATE oidc_backchannel_requests SET polled_at = $2, interval_seconds = interval_seconds + 5 WHERE id = $1",
            [.text(id), .int(now)])
    }

    /// Moves a pending request to `status`; false when it was no longer pending (another poll got there first).
    static func finish(_ id: String, _ status: BackchannelRequest.Status, on db: any SQLConnection) throws -> Bool {
        try db.execute(
            "UPDATE oidc_backchannel_requests SET status = $2 WHERE id = $1 AND status = 'pending'",
            [.text(id), .text(status.rawValue)]) == 1
    }

    /// The requests a client made since `since` that are still waiting: at most so many at once.
    static func waiting(clientID: String, now: Int64, on db: any SQLConnection) throws -> Int64 {
        try db.queryOne(
            "SELECT COUNT(*) AS n FROM oidc_backchannel_requests WHERE client_id = $1 AND status = 'pending' AND expires_at > $2",
            [.text(clientID), .int(now)])?.int("n") ?? 0
    }

    /// The device's answer to the request's push: its status, expiry and device.
    static func approval(_ id: String, on db: any SQLConnection) throws -> (
        status: ApprovalStatus, expiresAt: Int64, factorID: FactorID
    )? {
        guard
            let row = try db.queryOne(
                "SELECT status, expires_at, factor_id FROM push_approvals WHERE id = $1", [.text(id)])
        else { return nil }
        return (try row.value("status"), try row.int("expires_at"), FactorID(try row.text("factor_id")))
    }

    private static func record(_ r: Row) throws -> BackchannelRequest {
        BackchannelRequest(
            id: try r.text("id"), clientID: try r.text("client_id"), userID: try r.optionalText("user_id"),
            scopes: try r.text("scope").split(separator: " ").map(String.init),
            acr: try r.optionalText("acr").flatMap(ACR.init(rawValue:)),
            bindingMessage: try r.optionalText("binding_message"), approvalID: try r.optionalText("approval_id"),
            status: BackchannelRequest.Status(rawValue: try r.text("status")) ?? .denied,
            interval: Int(try r.int("interval_seconds")), polledAt: try r.optionalInt("polled_at"),
            createdAt: try r.int("created_at"), expiresAt: try r.int("expires_at"),
            linkHash: try r.optionalText("link_hash"))
    }
}
