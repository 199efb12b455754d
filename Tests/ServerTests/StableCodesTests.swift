import Core
import HTTP
import Testing
@testable import TrifactorServer

/// Wire codes and stored names are a contract with clients and with data
/// already written: renaming one breaks them. Change these lists only on purpose.
@Suite("Stable codes")
struct StableCodesTests {
    @Test("problem codes and statuses are pinned")
    func problemCodes() {
        let pinned: [(any HTTPResponseError, Int, String)] = [
            (APIError.invalidCredentials, 401, "invalid_credentials"),
            (APIError.unauthenticated, 401, "unauthenticated"),
            (APIError.sessionExpired, 401, "session_expired"),
            (APIError.invalidCode, 400, "invalid_code"),
            (APIError.tooManyAttempts(retryAfter: 1), 429, "too_many_attempts"),
            (APIError.rateLimited(retryAfter: 1), 429, "rate_limited"),
            (APIError.invalidFields([]), 422, "invalid_fields"),
            (APIError.serviceUnavailable, 503, "service_unavailable"),
            (HTTPProblem.notFound, 404, "not_found"),
            (HTTPProblem.methodNotAllowed(allowed: ["GET"]), 405, "method_not_allowed"),
            (HTTPProblem.malformedJSON, 400, "malformed_json"),
            (HTTPProblem.payloadTooLarge(limit: 1), 413, "payload_too_large"),
            (HTTPProblem.unsupportedMediaType, 415, "unsupported_media_type"),
            (HTTPProblem.invalidFields([]), 422, "invalid_fields"),
            (HTTPProblem.overloaded, 503, "overloaded"),
            (HTTPProblem.internalError, 500, "internal_error"),
        ]
        for (error, status, code) in pinned {
            #expect(error.status == status && error.code == code)
        }
    }

    @Test("audit event kinds are pinned")
    func auditKinds() {
        #expect(AuditEventKind.allCases.map(\.rawValue) == [
            "account.created", "account.signup_existing_email", "email.verification_sent", "email.verified",
            "email.verification_failed", "signin.succeeded", "signin.failed", "signin.locked", "signin.rate_limited",
            "password.rehashed", "session.ended", "session.expired", "delivery.failed", "api_key.created", "api_key.revoked",
            "api_key.rejected", "verify.started", "verify.step_fired", "verify.completed", "verify.wrong_code", "verify.terminated",
            "verify.cancelled", "verify.expired", "verify.refused", "mfa.enrollment_started", "mfa.enrolled", "mfa.enrollment_failed",
            "mfa.removed", "mfa.challenge_sent", "mfa.succeeded", "mfa.failed", "mfa.locked", "recovery_codes.generated", "recovery_code.used",
            "session.stepped_up", "session.revoked", "authorization.created", "authorization.approved", "authorization.failed", "authorization.used",
            "push.sent", "push.approved", "push.denied", "push.wrong_number",
        ])
    }
}
