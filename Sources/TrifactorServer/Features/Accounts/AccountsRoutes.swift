import API
import HTTP

/// `POST /v1/accounts`, `POST /v1/accounts/verify-email`, `POST /v1/accounts/verify-email/resend`,
/// `PATCH /v1/account` (the language of messages), `POST /v1/account/password`.
struct AccountsRoutes {
    let accounts: AccountService

    func register(on routes: inout APIRoutes) {
        routes.add("POST", "/v1/accounts", execution: .hashing) { request in
            let body = try request.decode(CreateAccountRequest.self)
            try accounts.signUp(
                email: body.email, password: body.password, displayName: body.displayName, locale: body.locale,
                client: AuditContext(request))
            return .json(VerificationSent(), status: 202)
        }
        routes.add("POST", "/v1/accounts/verify-email") { request in
            let body = try request.decode(VerifyEmailRequest.self)
            try accounts.verifyEmail(email: body.email, code: body.code, client: AuditContext(request))
            return .json(EmailVerified())
        }
        routes.add("POST", "/v1/accounts/verify-email/resend", idempotent: true) { request in
            let body = try request.decode(ResendVerificationRequest.self)
            try accounts.resend(email: body.email, client: AuditContext(request))
            return .json(VerificationSent(), status: 202)
        }
        routes.authenticated("PATCH", "/v1/account") { request, caller in
            let body = try request.decode(UpdateAccountRequest.self)
            return .json(try accounts.setLocale(caller, body.locale, client: AuditContext(request)))
        }
        routes.authenticated("POST", "/v1/account/password", execution: .hashing) { request, caller in
            let body = try request.decode(ChangePasswordRequest.self)
            try accounts.changePassword(
                caller, current: body.currentPassword, new: body.newPassword, client: AuditContext(request))
            return .noContent
        }
    }
}

/// The accounts feature's problems.
extension AccountFailure: APIFailure {
    var problem: APIError {
        switch self {
        case .invalidCode: .invalidCode
        }
    }
}
