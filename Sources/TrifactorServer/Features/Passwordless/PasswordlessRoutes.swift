import API
import Core
import HTTP

/// Passwordless sign-in: with a passkey (`POST /v1/sessions/passkey/options`,
/// `POST /v1/sessions/passkey`) or with a push to an enrolled device
/// (`POST /v1/sessions/push`, `POST /v1/sessions/push/complete`).
struct PasswordlessRoutes {
    let passwordless: PasswordlessService
    let policies: SessionPolicies

    func register(on routes: inout APIRoutes) {
        routes.add("POST", "/v1/sessions/passkey/options") { request in
            .json(PasskeyOptions(options: try passwordless.passkeyOptions(client: AuditContext(request))))
        }
        routes.add("POST", "/v1/sessions/passkey") { request in
            let body = try request.decode(PasskeySignInRequest.self)
            let issued = try passwordless.signIn(with: body.assertion, client: AuditContext(request))
            return .json(SessionCreated(token: issued.token, session: issued.session.info(policies)), status: 201)
        }
        routes.add("POST", "/v1/sessions/push") { request in
            let body = try request.decode(PushSignInRequest.self)
            let (credential, approval) = try passwordless.startPush(email: body.email, client: AuditContext(request))
            return .json(
                PushSignInStarted(pendingCredential: credential, approvalID: approval.id.raw, number: approval.number),
                status: 202)
        }
        routes.add("POST", "/v1/sessions/push/complete") { request in
            let body = try request.decode(PushSignInComplete.self)
            let issued = try passwordless.completePush(
                pendingCredential: body.pendingCredential, approvalID: ApprovalID(body.approvalID),
                client: AuditContext(request))
            return .json(SessionCreated(token: issued.token, session: issued.session.info(policies)), status: 201)
        }
    }
}
