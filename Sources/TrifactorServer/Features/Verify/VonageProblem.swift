import API
import Core
import HTTP

/// The phone verification API's problems, with the titles and details that
/// Vonage Verify v2 clients expect. `instance` carries Trifactor's request
/// id (the log key); a concurrency conflict names the verification in force
/// in `request_id`, as those clients expect. The `code` strings are pinned.
struct VonageProblem: HTTPResponseError, Sendable, Equatable {
    let status: Int
    let code: ProblemCode
    let title: String
    let detail: String
    var invalidParameters: [Problem.InvalidParameter]? = nil
    var conflictingRequestID: String? = nil
    var retryAfter: Int? = nil
    /// Wrong codes still allowed on this request (an extension member; Vonage clients ignore it).
    var remainingAttempts: Int? = nil

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
        p.remainingAttempts = remainingAttempts
        return p
    }

    /// The problem of a service failure; every failure has one, so a Vonage
    /// client never receives a Trifactor-shaped answer.
    init(_ failure: PhoneVerificationFailure) {
        switch failure {
        case .unauthorized:
            self = .init(
                status: 401, code: ProblemCode(rawValue: failure.code), title: "Unauthorized",
                detail: "You did not provide correct credentials.")
        case .invalidCode(let remaining):
            self = .init(
                status: 400, code: ProblemCode(rawValue: failure.code), title: "Invalid Code",
                detail: "The code you provided does not match the expected value.")
            remainingAttempts = remaining
        case .tooManyAttempts:
            self = .init(
                status: 410, code: ProblemCode(rawValue: failure.code), title: "Invalid Code",
                detail: "An incorrect code has been provided too many times. Workflow terminated.")
        case .notFound(let id):
            self = .init(
                status: 404, code: ProblemCode(rawValue: failure.code), title: "Not Found",
                detail: "Request '\(id.raw.prefix(64))' was not found or it has been verified already.")
        case .concurrent(let existing):
            self = .init(
                status: 409, code: ProblemCode(rawValue: failure.code), title: "Conflict",
                detail: "Concurrent verifications to the same number are not allowed.",
                conflictingRequestID: existing?.raw)
        case .cancelTooEarly(let id):
            self = .init(
                status: 409, code: ProblemCode(rawValue: failure.code), title: "Conflict",
                detail: "Verification request [\(id.raw)] can't be cancelled within the first 30 seconds.")
        case .cancelTooLate(let id):
            self = .init(
                status: 409, code: ProblemCode(rawValue: failure.code), title: "Conflict",
                detail:
                    "Verification request [\(id.raw)] can't be cancelled now. Too many attempts to re-deliver have already been made."
            )
        case .noMoreEvents:
            self = .init(
                status: 409, code: ProblemCode(rawValue: failure.code), title: "Conflict",
                detail: "There are no more events left to trigger.")
        case .deliveryUnavailable:
            self = .init(
                status: 503, code: ProblemCode(rawValue: failure.code), title: "Service Unavailable",
                detail: "No message provider is configured, so no code can be sent.",
                retryAfter: 60)
        case .rateLimited(let wait):
            self = .init(
                status: 429, code: ProblemCode(rawValue: failure.code), title: "Rate Limit Hit",
                detail: "Please wait, then retry your request", retryAfter: wait)
        case .budgetExceeded(_, let wait):
            self = .init(
                status: 429, code: .rateLimited, title: "Rate Limit Hit",
                detail: "Please wait, then retry your request", retryAfter: wait)
        case .invalidParameters(let fields):
            self = .init(
                status: 422, code: ProblemCode(rawValue: failure.code), title: "Invalid params",
                detail: "The value of one or more parameters is invalid",
                invalidParameters: fields.map { Problem.InvalidParameter(name: $0.name, reason: $0.reason) })
        }
    }

    private init(
        status: Int, code: ProblemCode, title: String, detail: String,
        invalidParameters: [Problem.InvalidParameter]? = nil,
        conflictingRequestID: String? = nil, retryAfter: Int? = nil
    ) {
        self.status = status
        self.code = code
        self.title = title
        self.detail = detail
        self.invalidParameters = invalidParameters
        self.conflictingRequestID = conflictingRequestID
        self.retryAfter = retryAfter
    }

    /// The Vonage-shaped answer to anything a Vonage route throws.
    static func answer(_ error: any Error) -> any Error {
        switch error {
        case let failure as PhoneVerificationFailure: VonageProblem(failure)
        case CommonFailure.rateLimited(let wait): VonageProblem(.rateLimited(retryAfter: wait))
        case CommonFailure.invalidFields(let fields): VonageProblem(.invalidParameters(fields))
        case CommonFailure.unavailable:
            VonageProblem(
                status: 503, code: .serviceUnavailable, title: "Service Unavailable",
                detail: "Please wait, then retry your request", retryAfter: 5)
        case let problem as HTTPProblem where problem.status == 422:
            VonageProblem(
                .invalidParameters((problem.invalidParams ?? []).map { FieldProblem(name: $0.name, reason: $0.reason) })
            )
        case let problem as HTTPProblem:
            VonageProblem(status: problem.status, code: problem.code, title: problem.title, detail: problem.detail)
        case let problem as VonageProblem: problem
        case let failure as IdempotencyFailure:
            VonageProblem(
                status: failure.problem.status, code: failure.problem.code, title: failure.problem.title,
                detail: failure.problem.detail,
                retryAfter: failure.problem.retryAfter)
        default: error
        }
    }
}
