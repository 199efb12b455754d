import API
import Core

/// Refusals of the phone verification service, in its own terms. The
/// Vonage-compatible routes turn them into Vonage-shaped problems; phone
/// factors into their own outcomes.
enum PhoneVerificationFailure: Error, Equatable {
    case unauthorized
    case notFound(VerificationID)
    case invalidCode(remaining: Int)
    case tooManyAttempts
    case concurrent(existing: VerificationID?)
    case cancelTooEarly(VerificationID)
    case cancelTooLate(VerificationID)
    case noMoreEvents
    case deliveryUnavailable
    case rateLimited(retryAfter: Int)
    /// A spending budget (per number prefix, country or in total) is used up: an SMS-pumping guard.
    case budgetExceeded(scope: String, retryAfter: Int)
    case invalidParameters([FieldProblem])

    init(_ rejection: VerifyWorkflow.Rejection, id: VerificationID) {
        switch rejection {
        case .notFound: self = .notFound(id)
        case .invalidCode(let remaining): self = .invalidCode(remaining: remaining)
        case .tooManyAttempts: self = .tooManyAttempts
        case .cancelTooEarly: self = .cancelTooEarly(id)
        case .cancelTooLate: self = .cancelTooLate(id)
        case .noMoreSteps: self = .noMoreEvents
        }
    }

    /// A 409 or 404 (audited as refused).
    var isConflictOrGone: Bool {
        switch self {
        case .notFound, .concurrent, .cancelTooEarly, .cancelTooLate, .noMoreEvents: true
        default: false
        }
    }

    /// The stable code, as audited and as the API shows it.
    var code: String {
        switch self {
        case .unauthorized: "unauthorized"
        case .notFound: "verification_not_found"
        case .invalidCode: "invalid_code"
        case .tooManyAttempts: "too_many_attempts"
        case .concurrent: "concurrent_verification"
        case .cancelTooEarly: "cancel_too_early"
        case .cancelTooLate: "cancel_too_late"
        case .noMoreEvents: "no_more_events"
        case .deliveryUnavailable: "delivery_unavailable"
        case .rateLimited: "rate_limited"
        case .budgetExceeded(let scope, _): "budget_exceeded \(scope)"
        case .invalidParameters: "invalid_parameters"
        }
    }
}
