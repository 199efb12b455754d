/// A stable problem code (`invalid_credentials`, `too_many_attempts`, …): the
/// `code` of every problem+json Trifactor answers, one vocabulary for the
/// server and its clients. Open on purpose: a client compares against the
/// constants and keeps working when a newer server sends a code it does not
/// know (`rawValue` holds it). The strings are a contract: never renamed
/// (pinned by a test).
public struct ProblemCode: RawRepresentable, Hashable, Sendable, Codable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }
    public var description: String { rawValue }

    /// Wrong password or unknown email: the same answer for both.
    public static let invalidCredentials: ProblemCode = "invalid_credentials"
    /// No session, or one that ended: sign in.
    public static let unauthenticated: ProblemCode = "unauthenticated"
    /// The session timed out: sign in again.
    public static let sessionExpired: ProblemCode = "session_expired"
    /// A wrong, expired or used code or signature; it reads the same whichever it was.
    public static let invalidCode: ProblemCode = "invalid_code"
    /// Too many tries from this client or on this account: wait `Retry-After` seconds.
    public static let tooManyAttempts: ProblemCode = "too_many_attempts"
    /// Too many requests: wait `Retry-After` seconds.
    public static let rateLimited: ProblemCode = "rate_limited"
    /// Fields were missing or invalid: `invalid_params` names each.
    public static let invalidFields: ProblemCode = "invalid_fields"
    /// The database cannot be reached: try again shortly.
    public static let serviceUnavailable: ProblemCode = "service_unavailable"
    /// No message provider can send the code now.
    public static let deliveryUnavailable: ProblemCode = "delivery_unavailable"
    /// The key that seals authenticator secrets is not configured.
    public static let totpUnavailable: ProblemCode = "totp_unavailable"
    /// The email address must be confirmed first.
    public static let unverifiedEmail: ProblemCode = "unverified_email"
    /// The action needs a recent password sign-in.
    public static let reauthenticationRequired: ProblemCode = "reauthentication_required"
    /// The action needs a fresh second factor (step-up).
    public static let secondFactorRequired: ProblemCode = "second_factor_required"
    /// The account has as many second factors as it may.
    public static let secondFactorLimitExceeded: ProblemCode = "second_factor_limit_exceeded"
    /// This factor (a number, a key) is enrolled already.
    public static let secondFactorExists: ProblemCode = "second_factor_exists"
    /// Recovery codes need another second factor first.
    public static let secondFactorNeeded: ProblemCode = "second_factor_needed"
    /// This factor cannot be used for that.
    public static let secondFactorUnusable: ProblemCode = "second_factor_unusable"
    /// The sign-in waiting for its second factor expired or was used: start again.
    public static let invalidPendingCredential: ProblemCode = "invalid_pending_credential"
    /// The enrollment expired, was used, or never existed.
    public static let enrollmentNotFound: ProblemCode = "enrollment_not_found"
    /// The account has no such factor.
    public static let factorNotFound: ProblemCode = "factor_not_found"
    /// The authorization expired, was used, or never existed.
    public static let authorizationNotFound: ProblemCode = "authorization_not_found"
    /// The authorization was approved for another action.
    public static let authorizationMismatch: ProblemCode = "authorization_mismatch"
    /// There is no such session.
    public static let sessionNotFound: ProblemCode = "session_not_found"
    /// An administrator disabled the account.
    public static let accountDisabled: ProblemCode = "account_disabled"
    /// The admin API needs an admin key.
    public static let adminKeyRequired: ProblemCode = "admin_key_required"
    /// This admin key may only read.
    public static let adminReadOnly: ProblemCode = "admin_read_only"
    /// There is no such user.
    public static let userNotFound: ProblemCode = "user_not_found"
    /// The `Idempotency-Key` header is malformed.
    public static let invalidIdempotencyKey: ProblemCode = "invalid_idempotency_key"
    /// The `Idempotency-Key` was used for a different request.
    public static let idempotencyKeyReused: ProblemCode = "idempotency_key_reused"
    /// A request with this `Idempotency-Key` is still running.
    public static let idempotencyKeyInProgress: ProblemCode = "idempotency_key_in_progress"
    /// A keyed request's body is larger than any keyed operation takes.
    public static let idempotentBodyTooLarge: ProblemCode = "idempotent_body_too_large"
    /// A password reset that expired or was used: ask for a new code.
    public static let invalidResetCredential: ProblemCode = "invalid_reset_credential"
    /// The last wrong code a sign-in, step-up, transfer or reset allowed: it ended; start it again.
    public static let attemptsExhausted: ProblemCode = "attempts_exhausted"
    /// A passkey sign-in that was not accepted: try again, or use the password.
    public static let passkeyRefused: ProblemCode = "passkey_refused"
    /// A hundred wrong second-factor codes in a row: two-step verification is locked until support resets it.
    public static let secondFactorFrozen: ProblemCode = "second_factor_frozen"
    /// The number is a test number set in the configuration.
    public static let testNumberConfigured: ProblemCode = "test_number_configured"
    /// The test number is enrolled as a factor.
    public static let testNumberEnrolled: ProblemCode = "test_number_enrolled"
    /// There is no such test number.
    public static let testNumberNotFound: ProblemCode = "test_number_not_found"
    /// There is no OpenID Provider client with this id.
    public static let clientNotFound: ProblemCode = "client_not_found"
    /// An OpenID Provider client has this id already.
    public static let clientExists: ProblemCode = "client_exists"
    /// The client authenticates without a secret, so it has none to rotate.
    public static let clientHasNoSecret: ProblemCode = "client_has_no_secret"
    /// Nothing is at this path.
    public static let notFound: ProblemCode = "not_found"
    /// The path does not take this method.
    public static let methodNotAllowed: ProblemCode = "method_not_allowed"
    /// The body is not the JSON the endpoint takes.
    public static let malformedJson: ProblemCode = "malformed_json"
    /// The request is not well-formed HTTP.
    public static let malformedRequest: ProblemCode = "malformed_request"
    /// The request target is too long.
    public static let uriTooLong: ProblemCode = "uri_too_long"
    /// The request uses a transfer coding the server does not take.
    public static let transferCodingNotImplemented: ProblemCode = "transfer_coding_not_implemented"
    /// The body is larger than the server takes.
    public static let payloadTooLarge: ProblemCode = "payload_too_large"
    /// The body's `Content-Type` is not one the endpoint takes.
    public static let unsupportedMediaType: ProblemCode = "unsupported_media_type"
    /// The server is overloaded: try again shortly.
    public static let overloaded: ProblemCode = "overloaded"
    /// Something failed on the server; the request id finds it in the log.
    public static let internalError: ProblemCode = "internal_error"
    /// The phone-verification API's credentials are wrong.
    public static let unauthorized: ProblemCode = "unauthorized"
    /// The verification expired, was completed, or never existed.
    public static let verificationNotFound: ProblemCode = "verification_not_found"
    /// A verification to this number is running already.
    public static let concurrentVerification: ProblemCode = "concurrent_verification"
    /// A verification cannot be cancelled in its first 30 seconds.
    public static let cancelTooEarly: ProblemCode = "cancel_too_early"
    /// A verification cannot be cancelled after its second event.
    public static let cancelTooLate: ProblemCode = "cancel_too_late"
    /// The verification's workflow has no further channel.
    public static let noMoreEvents: ProblemCode = "no_more_events"
    /// Parameters were missing or invalid: `invalid_parameters` names each.
    public static let invalidParameters: ProblemCode = "invalid_parameters"
    /// The caller may not do this.
    public static let forbidden: ProblemCode = "forbidden"
    /// This development endpoint is off.
    public static let unavailable: ProblemCode = "unavailable"

    /// Every code this version of Trifactor answers with.
    public static let known: [ProblemCode] = [
        .invalidCredentials,
        .unauthenticated,
        .sessionExpired,
        .invalidCode,
        .tooManyAttempts,
        .rateLimited,
        .invalidFields,
        .serviceUnavailable,
        .deliveryUnavailable,
        .totpUnavailable,
        .unverifiedEmail,
        .reauthenticationRequired,
        .secondFactorRequired,
        .secondFactorLimitExceeded,
        .secondFactorExists,
        .secondFactorNeeded,
        .secondFactorUnusable,
        .invalidPendingCredential,
        .enrollmentNotFound,
        .factorNotFound,
        .authorizationNotFound,
        .authorizationMismatch,
        .sessionNotFound,
        .accountDisabled,
        .adminKeyRequired,
        .adminReadOnly,
        .userNotFound,
        .invalidIdempotencyKey,
        .idempotencyKeyReused,
        .idempotencyKeyInProgress,
        .idempotentBodyTooLarge,
        .invalidResetCredential,
        .attemptsExhausted,
        .passkeyRefused,
        .secondFactorFrozen,
        .testNumberConfigured,
        .testNumberEnrolled,
        .testNumberNotFound,
        .clientNotFound,
        .clientExists,
        .clientHasNoSecret,
        .notFound,
        .methodNotAllowed,
        .malformedJson,
        .malformedRequest,
        .uriTooLong,
        .transferCodingNotImplemented,
        .payloadTooLarge,
        .unsupportedMediaType,
        .overloaded,
        .internalError,
        .unauthorized,
        .verificationNotFound,
        .concurrentVerification,
        .cancelTooEarly,
        .cancelTooLate,
        .noMoreEvents,
        .invalidParameters,
        .forbidden,
        .unavailable,
    ]
}
