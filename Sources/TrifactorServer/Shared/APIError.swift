import API
import HTTP

/// The problems Trifactor's own endpoints answer. The `code` strings are part
/// of the API (pinned by a test): never rename one.
public struct APIError: HTTPResponseError, Sendable, Equatable {
    public let status: Int
    public let code: String
    public let title: String
    public let detail: String
    public let invalidParams: [Problem.InvalidParameter]?
    public let retryAfter: Int?

    init(status: Int, code: String, title: String, detail: String, invalidParams: [Problem.InvalidParameter]? = nil, retryAfter: Int? = nil) {
        self.status = status
        self.code = code
        self.title = title
        self.detail = detail
        self.invalidParams = invalidParams
        self.retryAfter = retryAfter
    }

    public var headers: [(name: String, value: String)] {
        var h: [(name: String, value: String)] = []
        if let retryAfter { h.append(("Retry-After", String(retryAfter))) }
        if status == 401 { h.append(("WWW-Authenticate", "Bearer realm=\"trifactor\"")) }
        return h
    }

    /// Wrong password or unknown email: the same answer for both.
    static let invalidCredentials = APIError(status: 401, code: "invalid_credentials", title: "Invalid Credentials",
                                             detail: "The email or password is incorrect.")
    /// No token, or a token that is not (or no longer) a session.
    static let unauthenticated = APIError(status: 401, code: "unauthenticated", title: "Unauthenticated",
                                          detail: "Sign in to continue.")
    /// The session ran out (idle timeout or absolute lifetime).
    static let sessionExpired = APIError(status: 401, code: "session_expired", title: "Session Expired",
                                         detail: "Your session has expired: sign in again.")
    /// A verification code that is wrong, expired, used, or tried too often.
    static let invalidCode = APIError(status: 400, code: "invalid_code", title: "Invalid Code",
                                      detail: "The code is wrong or has expired. Request a new code if needed.")
    /// Too many consecutive failed sign-ins: wait.
    static func tooManyAttempts(retryAfter: Int) -> APIError {
        APIError(status: 429, code: "too_many_attempts", title: "Too Many Attempts",
                 detail: "Too many failed attempts: try again in \(retryAfter) seconds.", retryAfter: retryAfter)
    }
    /// A rate limit on the client or address.
    static func rateLimited(retryAfter: Int) -> APIError {
        APIError(status: 429, code: "rate_limited", title: "Too Many Requests",
                 detail: "Too many requests: try again in \(retryAfter) seconds.", retryAfter: retryAfter)
    }
    /// One or more fields are invalid.
    static func invalidFields(_ fields: [Problem.InvalidParameter]) -> APIError {
        APIError(status: 422, code: "invalid_fields", title: "Invalid Fields",
                 detail: "These fields are invalid: \(fields.map(\.name).joined(separator: ", ")).", invalidParams: fields)
    }
    /// The database cannot be reached.
    static let serviceUnavailable = APIError(status: 503, code: "service_unavailable", title: "Service Unavailable",
                                             detail: "The service is temporarily unavailable: try again shortly.", retryAfter: 5)
}
