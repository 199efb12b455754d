import API
import Core
import Foundation
import HTTP

/// The device's side of push approvals (`GET /v1/devices/{id}/approvals`,
/// a long poll; `POST /v1/devices/{id}/approvals/{approval}`) and the
/// browser's (`GET /v1/mfa/sign-in/approvals/{approval}`, a long poll).
struct PushRoutes {
    let push: PushService
    /// The longest wait a long poll may ask for, in seconds.
    static let maximumWait = 25.0

    func register(on routes: inout APIRoutes) {
        routes.add("GET", "/v1/devices/:id/approvals") { request in
            let device = try authenticatedDevice(request)
            let approvals = try push.pending(for: device)
            let wait = Self.wait(request)
            if approvals.isEmpty && wait > 0 {
                return .wait(
                    key: "device:\(device.id.raw)", timeout: wait, onTimeout: .json(PendingApprovals(approvals: [])))
            }
            return .json(PendingApprovals(approvals: approvals))
        }
        routes.add("POST", "/v1/devices/:id/approvals/:approval") { request in
            let device = try authenticatedDevice(request)
            let body = try request.decode(ApprovalDecision.self)
            let status = try push.decide(
                ApprovalID(request.parameters["approval"] ?? ""), by: device, decision: body.decision,
                number: body.number,
                signature: body.signature, client: AuditContext(request))
            return .json(ApprovalState(status: status.rawValue))
        }
        // The pending credential rides in a header, which access logs leave out; the query
        // parameter of earlier clients still works (a reverse proxy's access log records it).
        routes.add("GET", "/v1/mfa/sign-in/approvals/:approval") { request in
            let id = ApprovalID(request.parameters["approval"] ?? "")
            let status = try push.state(
                id,
                pendingCredential: request.header(Self.pendingCredentialHeader) ?? request.query["pending_credential"])
            let wait = Self.wait(request)
            if status == ApprovalStatus.pending.rawValue && wait > 0 {
                return .wait(key: "approval:\(id.raw)", timeout: wait, onTimeout: .json(ApprovalState(status: status)))
            }
            return .json(ApprovalState(status: status))
        }
    }

    /// The device named in the path, by its signed headers `X-Trifactor-Device-Time` and `X-Trifactor-Device-Signature`.
    private func authenticatedDevice(_ request: Request) throws -> Factor {
        try push.device(
            FactorID(request.parameters["id"] ?? ""), time: request.header("x-trifactor-device-time"),
            signature: request.header("x-trifactor-device-signature"))
    }

    /// The header a browser's approval poll sends its pending credential in (lower case, as requests are read).
    static let pendingCredentialHeader = "x-trifactor-pending-credential"

    /// `?wait=N`: seconds to wait for news, 0 to 25.
    private static func wait(_ request: Request) -> Double {
        min(maximumWait, max(0, Double(request.query["wait"] ?? "0") ?? 0))
    }
}

/// The push feature's problems.
extension PushFailure: APIFailure {
    var problem: APIError {
        switch self {
        case .notFound: .authorizationNotFound
        }
    }
}
