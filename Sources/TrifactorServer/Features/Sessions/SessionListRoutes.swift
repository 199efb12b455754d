import API
import Foundation
import HTTP

/// `GET /v1/sessions` (the user's live sessions) and `DELETE /v1/sessions/{id}`.
struct SessionListRoutes {
    let env: Environment

    func register(on router: inout Router) {
        router.add("GET", "/v1/sessions") { request in
            let auth = try SessionAuthenticator(env: env).authenticate(request).get()
            let sessions = try env.read { try SessionRepository.live(userID: auth.user.id, on: $0) }
            let now = env.clock.now()
            return .json(SessionList(sessions: sessions.filter {
                !env.sessionPolicy(aal: $0.aal).isExpired(created: Date(millis: $0.createdAt), lastSeen: Date(millis: $0.lastSeenAt), now: now)
            }.map {
                SessionSummary(id: $0.id, aal: $0.aal, methods: $0.methods, createdAt: Date(millis: $0.createdAt), lastSeenAt: Date(millis: $0.lastSeenAt),
                               ip: $0.ip, userAgent: $0.userAgent, current: $0.id == auth.session.id,
                               deviceID: $0.deviceID)
            }))
        }
        router.add("DELETE", "/v1/sessions/:id") { request in
            let auth = try SessionAuthenticator(env: env).authenticate(request).get()
            let id = request.parameters["id"] ?? ""
            try env.transaction { db in
                guard try SessionRepository.live(userID: auth.user.id, on: db).contains(where: { $0.id == id }),
                      try SessionRepository.end(id: id, at: env.nowMillis, reason: "revoked", on: db)
                else { throw APIError.sessionNotFound }
                try AuditLog.append(AuditContext(request).event(.sessionRevoked, .success, userID: auth.user.id, detail: "id=\(id)"), at: env.nowMillis, on: db)
            }
            env.changes.publish("session:\(id)")
            return .noContent
        }
    }
}
