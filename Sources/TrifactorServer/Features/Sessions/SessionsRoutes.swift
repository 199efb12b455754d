import API
import Core
import Crypto
import Foundation
import HTTP

/// `POST /v1/sessions` (sign in), `GET /v1/session`, `DELETE /v1/session`,
/// `GET /v1/sessions` (the caller's live sessions), `DELETE /v1/sessions/{id}`.
struct SessionsRoutes {
    let sessions: SessionService

    func register(on routes: inout APIRoutes) {
        let policies = sessions.policies
        routes.add("POST", "/v1/sessions", execution: .hashing) { request in
            let body = try request.decode(CreateSessionRequest.self)
            switch try sessions.signIn(email: body.email, password: body.password, client: AuditContext(request)) {
            case .session(let token, let session):
                return .json(SessionCreated(token: token, session: session.info(policies)), status: 201)
            case .secondFactor(let credential, let hints, let expiresAt, _):
                return .json(
                    MFARequired(
                        pendingCredential: credential, hints: hints.map(\.api),
                        expiresAt: Date(timeIntervalSince1970: Double(expiresAt) / 1000)))
            }
        }
        // The session check of every page: from the session cache on the HTTP thread when it can be.
        routes.add(
            "GET", "/v1/session",
            fast: { request in
                // The token is hashed once for both cache paths.
                guard let token = request.bearerToken, SessionToken.isWellFormed(token) else { return nil }
                let tokenHash = SHA256.hex(token)
                if let kept = sessions.keptAnswer(tokenHash: tokenHash) {
                    return Response(status: 200, headers: [("Content-Type", "application/json")], body: kept)
                }
                guard let caller = sessions.cached(tokenHash: tokenHash) else { return nil }
                let body = sessions.cachedAnswer(caller) { Self.current(caller, policies).body }
                return Response(status: 200, headers: [("Content-Type", "application/json")], body: body)
            }
        ) { request in
            Self.current(try sessions.authenticate(token: request.bearerToken, client: AuditContext(request)), policies)
        }
        routes.authenticated("DELETE", "/v1/session") { request, caller in
            try sessions.signOut(caller, client: AuditContext(request))
            return .noContent
        }
        routes.authenticated("GET", "/v1/sessions") { request, caller in
            let limit =
                try request.query["limit"].map { text throws -> Int in
                    guard let value = Int(text) else {
                        throw CommonFailure.invalid(
                            "limit", "must be a whole number from 1 to \(SessionService.pageLimit)")
                    }
                    return value
                } ?? 50
            let cursor = try request.query["after"].map { text throws -> SessionCursor in
                guard let cursor = SessionCursor(text) else {
                    throw CommonFailure.invalid("after", "must be the next value of a previous page")
                }
                return cursor
            }
            let (page, next) = try sessions.list(caller, after: cursor, limit: limit)
            return .json(
                SessionList(
                    sessions: page.map {
                        SessionSummary(
                            id: $0.id.raw, aal: $0.aal.rawValue, methods: $0.methods.map(\.rawValue),
                            createdAt: Date(millis: $0.createdAt),
                            lastSeenAt: Date(millis: $0.lastSeenAt), ip: $0.ip, userAgent: $0.userAgent,
                            current: $0.id == caller.session.id,
                            deviceID: $0.deviceID?.raw, device: DeviceName.describe(userAgent: $0.userAgent))
                    }, next: next?.text))
        }
        routes.authenticated("DELETE", "/v1/sessions/:id") { request, caller in
            try sessions.revoke(SessionID(request.parameters["id"] ?? ""), by: caller, client: AuditContext(request))
            return .noContent
        }
    }

    private static func current(_ caller: Caller, _ policies: SessionPolicies) -> Response {
        .json(CurrentSession(session: caller.session.info(policies), user: caller.user.info))
    }
}

/// The sessions feature's problems.
extension SignInFailure: APIFailure {
    var problem: APIError {
        switch self {
        case .invalidCredentials: .invalidCredentials
        case .passkeyRefused: .passkeyRefused
        case .locked(let wait): .tooManyAttempts(retryAfter: wait)
        case .disabled: .accountDisabled
        }
    }
}

extension SessionFailure: APIFailure {
    var problem: APIError {
        switch self {
        case .notFound: .sessionNotFound
        }
    }
}

extension SessionService.Hint {
    /// As the API shows it.
    var api: MFAHint {
        MFAHint(enrollmentID: factorID.raw, kind: kind.wire, displayName: displayName, maskedPhone: maskedPhone)
    }
}
