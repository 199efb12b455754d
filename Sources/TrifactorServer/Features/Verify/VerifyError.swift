import API
import HTTP

/// The phone verification API's problems, with the titles and details that
/// Vonage Verify v2 clients expect. `instance` carries Trifactor's request
/// id (the log key); a concurrency conflict names the verification in force
/// in `request_id`, as those clients expect. The `code` strings are pinned.
struct VerifyError: HTTPResponseError, Sendable, Equatable {
    let status: Int
    let code: String
    let title: String
    let detail: String
    var invalidParameters: [Problem.InvalidParameter]? = nil
    var conflictingRequestID: String? = nil
    var retryAfter: Int? = nil

    var headers: [(name: String, value: String)] {
        var h: [(name: String, value: String)] = []
        if let retryAfter { h.append(("Retry-After", String(retryAfter))) }
        if status == 401 { h.append(("WWW-Authenticate", "Basic realm=\"trifactor\"")) }
        return h
    }

    func problem(requestID: String) -> Problem {
        var p = Problem(status: status, code: code, title: title, detail: detail)
        p.instance = requestID
        p.requestID = conflictingRequestID
        p.invalidParameters = invalidParameters
        return p
    }

    static let unauthorized = VerifyError(status: 401, code: "unauthorized", title: "Unauthorized",
                                          detail: "You did not provide correct credentials.")
    static let invalidCode = VerifyError(status: 400, code: "invalid_code", title: "Invalid Code",
                                         detail: "The code you provided does not match the expected value.")
    static let tooManyAttempts = VerifyError(status: 410, code: "too_many_attempts", title: "Invalid Code",
                                             detail: "An incorrect code has been provided too many times. Workflow terminated.")
    static func notFound(_ id: String) -> VerifyError {
        VerifyError(status: 404, code: "verification_not_found", title: "Not Found",
                    detail: "Request '\(id.prefix(64))' was not found or it has been verified already.")
    }
    static func concurrent(existing: String?) -> VerifyError {
        VerifyError(status: 409, code: "concurrent_verification", title: "Conflict",
                    detail: "Concurrent verifications to the same number are not allowed.", conflictingRequestID: existing)
    }
    static func cancelTooEarly(_ id: String) -> VerifyError {
        VerifyError(status: 409, code: "cancel_too_early", title: "Conflict",
                    detail: "Verification request [\(id)] can't be cancelled within the first 30 seconds.")
    }
    static func cancelTooLate(_ id: String) -> VerifyError {
        VerifyError(status: 409, code: "cancel_too_late", title: "Conflict",
                    detail: "Verification request [\(id)] can't be cancelled now. Too many attempts to re-deliver have already been made.")
    }
    static let deliveryUnavailable = VerifyError(status: 503, code: "delivery_unavailable", title: "Service Unavailable",
                                                 detail: "No message provider is configured, so no code can be sent.", retryAfter: 60)
    static let noMoreEvents = VerifyError(status: 409, code: "no_more_events", title: "Conflict",
                                          detail: "There are no more events left to trigger.")
    static func invalidParameters(_ fields: [Problem.InvalidParameter]) -> VerifyError {
        VerifyError(status: 422, code: "invalid_parameters", title: "Invalid params",
                    detail: "The value of one or more parameters is invalid", invalidParameters: fields)
    }
    static func rateLimited(retryAfter: Int) -> VerifyError {
        VerifyError(status: 429, code: "rate_limited", title: "Rate Limit Hit", detail: "Please wait, then retry your request",
                    retryAfter: retryAfter)
    }
}
