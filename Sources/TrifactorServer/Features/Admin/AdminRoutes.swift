import API
import Core
import Foundation
import HTTP

/// The admin API, for an operator's tools, behind admin keys
/// (`Authorization: Bearer tfadm_…`); a `read` key gets 403 on every write.
/// - `GET /admin/v1/users?email=|id=|phone=`: find users;
/// - `GET /admin/v1/users/{id}`: a user with factors, devices, passkeys and sessions;
/// - `POST /admin/v1/users/{id}/disable`, `…/enable`, `…/reset-mfa`,
///   `…/revoke-sessions`, `…/verify-email`; `DELETE /admin/v1/users/{id}`;
/// - `GET /admin/v1/audit?user=&kind=&since=&until=&after=&limit=`;
/// - the test numbers, the OpenID Provider's clients (`AdminRoutes+Clients.swift`) and the webhook
///   endpoints (`AdminRoutes+Webhooks.swift`).
struct AdminRoutes {
    let admin: AdminService
    let clients: ClientService
    let webhooks: WebhookService
    let keys: AdminKeys
    let transactions: Transactions
    let clock: Clock

    func register(on routes: inout APIRoutes) {
        routes.add("GET", "/admin/v1/users") { request in
            let actor = try authenticate(request, needs: .read)
            let users = try admin.find(
                email: request.query["email"], id: request.query["id"], phone: request.query["phone"], actor: actor)
            return .json(AdminUserList(users: users.map(Self.summary)))
        }
        routes.add("GET", "/admin/v1/users/:id") { request in
            let actor = try authenticate(request, needs: .read)
            let (user, factors, sessions) = try admin.show(UserID(request.parameters["id"] ?? ""), actor: actor)
            return .json(
                AdminUser(
                    user: Self.summary(user), locale: user.locale,
                    factors: factors.filter { $0.kind != .device && $0.kind != .passkey }.map(\.api),
                    devices: factors.filter { $0.kind == .device }.map(\.api),
                    passkeys: factors.filter { $0.kind == .passkey }.map(\.api),
                    sessions: sessions.map {
                        AdminSession(
                            id: $0.id.raw, aal: $0.aal.rawValue, methods: $0.methods.map(\.rawValue),
                            createdAt: Date(millis: $0.createdAt),
                            lastSeenAt: Date(millis: $0.lastSeenAt), ip: $0.ip, userAgent: $0.userAgent)
                    }))
        }
        let writes: [(String, @Sendable (AdminService, UserID, AdminService.Actor) throws -> AdminActionResult)] = [
            ("disable", { try $0.disable($1, actor: $2) }), ("enable", { try $0.enable($1, actor: $2) }),
            ("reset-mfa", { try $0.resetMFA($1, actor: $2) }),
            ("revoke-sessions", { try $0.revokeSessions($1, actor: $2) }),
            ("verify-email", { try $0.markEmailVerified($1, actor: $2) }),
        ]
        for (action, run) in writes {
            routes.add("POST", "/admin/v1/users/:id/\(action)") { request in
                let actor = try authenticate(request, needs: .write)
                return .json(try run(admin, UserID(request.parameters["id"] ?? ""), actor))
            }
        }
        routes.add("DELETE", "/admin/v1/users/:id") { request in
            let actor = try authenticate(request, needs: .write)
            return .json(try admin.delete(UserID(request.parameters["id"] ?? ""), actor: actor))
        }
        routes.add("GET", "/admin/v1/test-numbers") { request in
            let actor = try authenticate(request, needs: .read)
            return .json(AdminTestNumbers(testNumbers: try admin.testNumbers(actor: actor).map(Self.testNumber)))
        }
        routes.add("PUT", "/admin/v1/test-numbers/:number") { request in
            let actor = try authenticate(request, needs: .write)
            let body = try request.decode(AdminTestNumberRequest.self)
            return .json(
                Self.testNumber(
                    try admin.setTestNumber(request.parameters["number"] ?? "", code: body.code, actor: actor)))
        }
        routes.add("DELETE", "/admin/v1/test-numbers/:number") { request in
            let actor = try authenticate(request, needs: .write)
            try admin.removeTestNumber(request.parameters["number"] ?? "", actor: actor)
            return .noContent
        }
        routes.add("GET", "/admin/v1/audit") { request in
            let actor = try authenticate(request, needs: .read)
            let q = request.query
            let limit = try Self.integer(q["limit"], "limit") ?? 100
            let entries = try admin.audit(
                user: q["user"], kind: q["kind"], since: try Self.time(q["since"], "since"),
                until: try Self.time(q["until"], "until"),
                after: try Self.integer(q["after"], "after"), limit: Int(limit), actor: actor)
            return .json(
                AdminAuditPage(
                    entries: entries.map {
                        AdminAuditEntry(
                            seq: $0.seq, at: $0.at, kind: $0.kind, outcome: $0.outcome, userID: $0.userID, ip: $0.ip,
                            userAgent: $0.userAgent, detail: $0.detail)
                    }, next: entries.count == Int(limit) ? entries.last?.seq : nil))
        }
        registerClients(on: &routes)
        registerWebhooks(on: &routes)
    }

    /// The caller's admin key, with the role `needs`: 401 without a live key
    /// (a wrong one audited), 403 for a read key on a write (audited); past
    /// a client's (or the read key's) budget of refusals, 429.
    func authenticate(_ request: Request, needs role: AdminRole) throws -> AdminService.Actor {
        let client = AuditContext(request)
        let key = try transactions.read { try keys.authenticate(token: request.bearerToken, on: $0) }
        guard let key else {
            // No key at all is audited like a wrong one, within a budget of its own (it must not spend the
            // wrong keys'); nothing was guessed, so past its budget it is still a 401, only no longer audited.
            let missing = request.bearerToken == nil
            throw try refusal(
                APIError.adminKeyRequired, budget: "admin:\(missing ? "no-key" : "ip"):\(client.clientKey)",
                detail: "\(missing ? "no key" : "unknown key"): \(request.method) \(request.path)", client: client,
                slowsDown: !missing)
        }
        if role == .write && key.role != .write {
            throw try refusal(
                APIError.adminReadOnly, budget: "admin:read-only:\(key.id)",
                detail: "admin=\(key.name) read-only: \(request.method) \(request.path)", client: client)
        }
        return AdminService.Actor(name: key.name, client: client)
    }

    /// A refusal, audited as `admin_key.rejected` while its budget (a burst
    /// of 10, then one per 5 s) lasts: past it no audit entry, so a flood
    /// cannot fill the audit log, and 429 when `slowsDown` (a guessed key).
    private func refusal(
        _ problem: APIError, budget: String, detail: String, client: AuditContext, slowsDown: Bool = true
    ) throws -> APIError {
        let now = clock.now().millis
        let wait = try transactions.write { db -> Int? in
            if let wait = try RateLimiter.take(budget, limit: Self.refusals, nowMillis: now, on: db) { return wait }
            try AuditLog.append(client.event(.adminKeyRejected, .denied, detail: detail), at: now, on: db)
            return nil
        }
        guard slowsDown else { return problem }
        return wait.map { APIError.rateLimited(retryAfter: $0) } ?? problem
    }

    static func testNumber(_ e: TestNumberBook.Entry) -> AdminTestNumber {
        AdminTestNumber(
            number: e.number, code: e.code, source: e.source, createdAt: e.createdAt.map { Date(millis: $0) })
    }

    /// Refusals per client (a wrong key) or per read key (a write): a burst of 10, then one per 5 s.
    static let refusals = RateLimiter.Limit(burst: 10, rate: 0.2)

    static func summary(_ user: UserRecord) -> AdminUserSummary {
        AdminUserSummary(
            id: user.id.raw, email: user.email, displayName: user.displayName,
            emailVerified: user.emailVerifiedAt != nil,
            disabled: user.disabledAt != nil, createdAt: Date(millis: user.createdAt))
    }

    private static func integer(_ text: String?, _ name: String) throws -> Int64? {
        guard let text else { return nil }
        guard let value = Int64(text), value >= 0 else { throw CommonFailure.invalid(name, "must be a whole number") }
        return value
    }

    /// An RFC 3339 time as stored milliseconds.
    private static func time(_ text: String?, _ name: String) throws -> Int64? {
        guard let text else { return nil }
        guard let date = WireJSON.parse(text) else {
            throw CommonFailure.invalid(name, "must be an RFC 3339 time such as 2026-12-01T10:00:00Z")
        }
        return date.millis
    }
}

extension AdminFailure: APIFailure {
    var problem: APIError {
        switch self {
        case .userNotFound: .userNotFound
        case .testNumberConfigured: .testNumberConfigured
        case .testNumberNotFound: .testNumberNotFound
        case .testNumberEnrolled: .testNumberEnrolled
        }
    }
}
