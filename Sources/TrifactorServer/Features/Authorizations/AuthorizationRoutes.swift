import API
import Core
import HTTP

/// `POST /v1/authorizations` (describe an action and get its challenge),
/// `POST /v1/authorizations/{id}/challenges` (its challenge again: a new code),
/// `POST /v1/authorizations/{id}` (approve it with a proof) and `…/consume`.
struct AuthorizationRoutes {
    let authorizations: AuthorizationService
    let mfa: MFARoutes

    func register(on routes: inout APIRoutes) {
        routes.authenticated("POST", "/v1/authorizations", idempotent: true) { request, caller in
            let body = try request.decode(CreateAuthorizationRequest.self)
            let created = try authorizations.create(
                body.action, factorID: FactorID(body.enrollmentID), by: caller, client: AuditContext(request))
            return .json(Self.created(created), status: 202)
        }
        routes.authenticated("POST", "/v1/authorizations/:id/challenges", idempotent: true) { request, caller in
            let body = try request.decode(ConsumeAuthorizationRequest.self)
            let created = try authorizations.resend(
                AuthorizationID(request.parameters["id"] ?? ""), action: body.action, by: caller,
                client: AuditContext(request))
            return .json(Self.created(created), status: 202)
        }
        routes.authenticated("POST", "/v1/authorizations/:id") { request, caller in
            let body = try request.decode(ApproveAuthorizationRequest.self)
            try authorizations.approve(
                AuthorizationID(request.parameters["id"] ?? ""),
                proof: try mfa.proof(code: body.code, assertion: body.assertion),
                by: caller, client: AuditContext(request))
            return .json(AuthorizationStatus(status: AuthorizationState.approved.rawValue))
        }
        routes.authenticated("POST", "/v1/authorizations/:id/consume") { request, caller in
            let body = try request.decode(ConsumeAuthorizationRequest.self)
            try authorizations.consume(AuthorizationID(request.parameters["id"] ?? ""), action: body.action, by: caller)
            return .json(AuthorizationStatus(status: AuthorizationState.used.rawValue))
        }
    }

    /// The answer to a created or resent authorization: its id and summary, and what its factor needs.
    static func created(_ created: AuthorizationService.Created) -> AuthorizationCreated {
        let sent = MFARoutes.challengeSent(created.challenge, purpose: "authz")
        var answer = AuthorizationCreated(
            authorizationID: created.id.raw, summary: created.summary, challenge: sent.challenge,
            actionHash: sent.challenge.map { _ in created.actionHash })
        answer.options = sent.options
        return answer
    }
}

/// The bound actions' problems.
extension AuthorizationFailure: APIFailure {
    var problem: APIError {
        switch self {
        case .notFound: .authorizationNotFound
        case .mismatch: .authorizationMismatch
        case .unverifiedEmail: .unverifiedEmail
        }
    }
}
