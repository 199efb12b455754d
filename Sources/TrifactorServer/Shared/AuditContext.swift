import Core
import HTTP

/// Who made a request, as the audit log records it: the client's address
/// and user agent, taken once from the request.
struct AuditContext: Sendable {
    let ip: String
    let userAgent: String?

    init(_ request: Request) {
        ip = request.remoteAddress
        userAgent = request.header("user-agent")
    }

    init(ip: String, userAgent: String?) {
        self.ip = ip
        self.userAgent = userAgent
    }

    /// The key per-IP limits count under (an IPv6 client by its /64).
    var clientKey: String { ClientKey.of(address: ip) }

    func event(_ kind: AuditEventKind, _ outcome: AuditOutcome, userID: UserID? = nil, detail: String? = nil) -> AuditEvent {
        AuditEvent(kind: kind, outcome: outcome, userID: userID?.raw, ip: ip, userAgent: userAgent, detail: detail)
    }
}
