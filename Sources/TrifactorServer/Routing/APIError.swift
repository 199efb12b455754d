package import API
import HTTP

/// The problems Trifactor's own endpoints answer. The `code` strings are part
/// of the API (pinned by a test): never rename one.
package struct APIError: HTTPResponseError, Sendable, Equatable {
    package let status: Int
    package let code: ProblemCode
    package let title: String
    package let detail: String
    package let invalidParams: [Problem.InvalidParameter]?
    package let retryAfter: Int?
    /// Wrong proofs still allowed before the second step locks (`remaining_attempts`), for a wrong code.
    package private(set) var remainingAttempts: Int?

    init(
        status: Int, code: ProblemCode, title: String, detail: String, invalidParams: [Problem.InvalidParameter]? = nil,
        retryAfter: Int? = nil
    ) {
        self.status = status
        self.code = code
        self.title = title
        self.detail = detail
        self.invalidParams = invalidParams
        self.retryAfter = retryAfter
    }

    package var headers: [(name: String, value: String)] {
        var h: [(name: String, value: String)] = []
        if let retryAfter { h.append(("Retry-After", String(retryAfter))) }
        if status == 401 { h.append(("WWW-Authenticate", "Bearer realm=\"trifactor\"")) }
        return h
    }

    /// This problem saying how many wrong proofs remain.
    func remaining(_ count: Int) -> APIError {
        var copy = self
        copy.remainingAttempts = count
        return copy
    }

    package func problem(requestID: String) -> Problem {
        var p = Problem(
            status: status, code: code, title: title, detail: detail, requestID: requestID, invalidParams: invalidParams
        )
        p.remainingAttempts = remainingAttempts
        return p
    }

    /// Wrong password or unknown email: the same answer for both.
    static let invalidCredentials = APIError(
        status: 401, code: .invalidCredentials, title: "Invalid Credentials",
        detail: "The email or password is incorrect.")
    /// No token, or a token that is not (or no longer) a session.
    static let unauthenticated = APIError(
        status: 401, code: .unauthenticated, title: "Unauthenticated",
        detail: "Sign in to continue.")
    /// The session ran out (idle timeout or absolute lifetime).
    static let sessionExpired = APIError(
        status: 401, code: .sessionExpired, title: "Session Expired",
        detail: "Your session has expired: sign in again.")
    /// A verification code that is wrong, expired, used, or tried too often.
    static let invalidCode = APIError(
        status: 400, code: .invalidCode, title: "Invalid Code",
        detail: "The code is wrong or has expired. Request a new code if needed.")
    /// Too many consecutive failed sign-ins: wait.
    static func tooManyAttempts(retryAfter: Int) -> APIError {
        APIError(
            status: 429, code: .tooManyAttempts, title: "Too Many Attempts",
            detail: "Too many failed attempts: try again in \(retryAfter) seconds.", retryAfter: retryAfter)
    }
    /// A rate limit on the client or address.
    static func rateLimited(retryAfter: Int) -> APIError {
        APIError(
            status: 429, code: .rateLimited, title: "Too Many Requests",
            detail: "Too many requests: try again in \(retryAfter) seconds.", retryAfter: retryAfter)
    }
    /// One or more fields are invalid.
    static func invalidFields(_ fields: [Problem.InvalidParameter]) -> APIError {
        APIError(
            status: 422, code: .invalidFields, title: "Invalid Fields",
            detail: "These fields are invalid: \(fields.map(\.name).joined(separator: ", ")).", invalidParams: fields)
    }
    /// The signed-in user chose no sitekey (`GET /v1/account/sitekey`).
    static let sitekeyNotSet = APIError(
        status: 404, code: .notFound, title: "Not Found", detail: "No sitekey has been chosen for this account.")
    /// Enrolling needs a verified email.
    static let unverifiedEmail = APIError(
        status: 403, code: .unverifiedEmail, title: "Unverified Email",
        detail: "Verify your email address first.")
    /// The last password or second-factor proof is too old for this.
    static let reauthenticationRequired = APIError(
        status: 401, code: .reauthenticationRequired, title: "Reauthentication Required",
        detail: "Sign in again (or prove a second factor) to do this.")
    /// Removing a factor needs a recent second-factor proof.
    static let secondFactorRequired = APIError(
        status: 401, code: .secondFactorRequired, title: "Second Factor Required",
        detail: "Prove a second factor (step up) to do this.")
    static let secondFactorLimitExceeded = APIError(
        status: 409, code: .secondFactorLimitExceeded, title: "Too Many Second Factors",
        detail: "You have the most second factors allowed: remove one first.")
    static let secondFactorExists = APIError(
        status: 409, code: .secondFactorExists, title: "Second Factor Exists",
        detail: "This second factor is already enrolled.")
    static let secondFactorUnusable = APIError(
        status: 409, code: .secondFactorUnusable, title: "Second Factor Unusable",
        detail: "This second factor cannot be used for this.")
    static let secondFactorNeeded = APIError(
        status: 409, code: .secondFactorNeeded, title: "Second Factor Needed",
        detail: "Enroll a phone or an authenticator app first.")
    /// No message provider is configured, so no phone code can be sent.
    static let deliveryUnavailable = APIError(
        status: 503, code: .deliveryUnavailable, title: "Service Unavailable",
        detail: "No message provider is configured, so no code can be sent.", retryAfter: 60)
    static let totpUnavailable = APIError(
        status: 503, code: .totpUnavailable, title: "Service Unavailable",
        detail: "Authenticator apps are not available: the server has no key file.")
    static let enrollmentNotFound = APIError(
        status: 404, code: .enrollmentNotFound, title: "Not Found",
        detail: "This enrollment session does not exist, has expired or was used.")
    static let factorNotFound = APIError(
        status: 404, code: .factorNotFound, title: "Not Found",
        detail: "There is no such second factor.")
    static let invalidPendingCredential = APIError(
        status: 401, code: .invalidPendingCredential, title: "Invalid Pending Credential",
        detail: "This sign-in has expired or was completed: sign in again.")
    static let authorizationNotFound = APIError(
        status: 404, code: .authorizationNotFound, title: "Not Found",
        detail: "This authorization does not exist, has expired or was used.")
    static let authorizationMismatch = APIError(
        status: 403, code: .authorizationMismatch, title: "Authorization Mismatch",
        detail: "The action differs from the one that was approved.")
    static let accountDisabled = APIError(
        status: 403, code: .accountDisabled, title: "Account Disabled",
        detail: "This account has been disabled. Contact the service's support.")
    static let adminKeyRequired = APIError(
        status: 401, code: .adminKeyRequired, title: "Admin Key Required",
        detail: "Send a live admin key as Authorization: Bearer (trifactord admin-keys create makes one).")
    static let adminReadOnly = APIError(
        status: 403, code: .adminReadOnly, title: "Read-Only Admin Key",
        detail: "This admin key may read but not change anything: use a key made with --role write.")
    static let testNumberConfigured = APIError(
        status: 409, code: .testNumberConfigured, title: "Test Number Configured",
        detail: "This test number comes from TRIFACTOR_TEST_NUMBERS: change it there.")
    static let testNumberEnrolled = APIError(
        status: 409, code: .testNumberEnrolled, title: "Test Number Enrolled",
        detail: "A user's second factor uses this number: as a test number it would never receive its codes.")
    static let testNumberNotFound = APIError(
        status: 404, code: .testNumberNotFound, title: "Not Found", detail: "There is no such test number.")
    /// No webhook endpoint has this id.
    static let webhookNotFound = APIError(
        status: 404, code: .notFound, title: "Not Found", detail: "There is no such webhook endpoint.")
    /// Webhook secrets are sealed with the key ring: without a key file there are no webhooks.
    static let webhooksUnavailable = APIError(
        status: 503, code: .serviceUnavailable, title: "Service Unavailable",
        detail: "Webhooks need the key file: their secrets are sealed with it.")
    static let clientNotFound = APIError(
        status: 404, code: .clientNotFound, title: "Not Found", detail: "There is no such client.")
    static let clientExists = APIError(
        status: 409, code: .clientExists, title: "Client Exists",
        detail: "A client has this client_id already: choose another, or leave it out to get one made.")
    static let clientHasNoSecret = APIError(
        status: 409, code: .clientHasNoSecret, title: "Client Has No Secret",
        detail: "This client has no secret to rotate: it authenticates another way (none or private_key_jwt).")
    static let userNotFound = APIError(
        status: 404, code: .userNotFound, title: "Not Found", detail: "There is no such user.")
    static let sessionNotFound = APIError(
        status: 404, code: .sessionNotFound, title: "Not Found", detail: "There is no such session.")
    /// An `Idempotency-Key` header that is not 1 to 255 visible ASCII characters.
    static let invalidIdempotencyKey = APIError(
        status: 400, code: .invalidIdempotencyKey, title: "Invalid Idempotency Key",
        detail:
            "The Idempotency-Key header must be 1 to 255 visible ASCII characters, without quotes or backslashes inside."
    )
    /// An `Idempotency-Key` already used for a different request.
    static let idempotencyKeyReused = APIError(
        status: 422, code: .idempotencyKeyReused, title: "Idempotency Key Reused",
        detail: "This Idempotency-Key was used for a different request: use a new key for a new request.")
    /// Another request with the same `Idempotency-Key` is still running.
    static let idempotencyKeyInProgress = APIError(
        status: 409, code: .idempotencyKeyInProgress, title: "Request In Progress",
        detail: "A request with this Idempotency-Key is still running: retry shortly.", retryAfter: 1)
    /// A body with an `Idempotency-Key` larger than any keyed operation takes.
    static let idempotentBodyTooLarge = APIError(
        status: 413, code: .idempotentBodyTooLarge, title: "Body Too Large",
        detail:
            "A request with an Idempotency-Key carries at most \(Idempotency.maxBodyBytes) bytes, \(Idempotency.maxMembers) JSON members and elements, and \(Idempotency.maxDepth) levels of nesting."
    )
    /// The last wrong proof a sign-in, step-up, authorization or reset allowed: it has ended.
    static let attemptsExhausted = APIError(
        status: 403, code: .attemptsExhausted, title: "Too Many Wrong Codes",
        detail: "Too many wrong codes: what you were confirming has ended. Start it again to get a new code.")
    /// A hundred wrong second-factor proofs in a row: locked until an administrator resets the factors.
    static let secondFactorFrozen = APIError(
        status: 403, code: .secondFactorFrozen, title: "Two-Step Verification Locked",
        detail:
            "Too many wrong codes in a row: two-step verification is locked on this account. Contact support to unlock it."
    )
    /// A passkey sign-in that was not accepted.
    static let passkeyRefused = APIError(
        status: 401, code: .passkeyRefused, title: "Passkey Refused",
        detail: "This passkey was not accepted. Try it again, or sign in with your email and password.")
    /// A password reset's credential that is unknown, expired or used.
    static let invalidResetCredential = APIError(
        status: 401, code: .invalidResetCredential, title: "Invalid Reset Credential",
        detail: "This password reset expired or was used: ask for a new code.")
    /// The database cannot be reached.
    static let serviceUnavailable = APIError(
        status: 503, code: .serviceUnavailable, title: "Service Unavailable",
        detail: "The service is temporarily unavailable: try again shortly.", retryAfter: 5)
}
