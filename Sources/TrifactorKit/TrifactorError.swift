import API
public import Foundation

/// A stable problem code from the server (`invalid_credentials`,
/// `too_many_attempts`, …): compare against the constants, switch on
/// `rawValue` for codes this SDK version does not know yet.
public struct ProblemCode: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }
    public var description: String { rawValue }

    public static let invalidCredentials: ProblemCode = "invalid_credentials"
    public static let invalidCode: ProblemCode = "invalid_code"
    public static let invalidFields: ProblemCode = "invalid_fields"
    public static let unauthenticated: ProblemCode = "unauthenticated"
    public static let sessionExpired: ProblemCode = "session_expired"
    public static let invalidPendingCredential: ProblemCode = "invalid_pending_credential"
    /// A password reset that expired or was used: ask for a new code.
    public static let invalidResetCredential: ProblemCode = "invalid_reset_credential"
    /// The last wrong code a sign-in, step-up, transfer or reset allowed: it ended; start it again.
    public static let attemptsExhausted: ProblemCode = "attempts_exhausted"
    /// A passkey sign-in that was not accepted: try again, or use the password.
    public static let passkeyRefused: ProblemCode = "passkey_refused"
    /// A hundred wrong second-factor codes in a row: two-step verification is locked until support resets it.
    public static let secondFactorFrozen: ProblemCode = "second_factor_frozen"
    public static let reauthenticationRequired: ProblemCode = "reauthentication_required"
    public static let secondFactorRequired: ProblemCode = "second_factor_required"
    public static let unverifiedEmail: ProblemCode = "unverified_email"
    public static let tooManyAttempts: ProblemCode = "too_many_attempts"
    public static let rateLimited: ProblemCode = "rate_limited"
    public static let overloaded: ProblemCode = "overloaded"
    public static let serviceUnavailable: ProblemCode = "service_unavailable"
}

/// The server refused: its problem+json, read into one value.
public struct ServerProblem: Sendable, Equatable {
    /// One field the server named as missing or invalid.
    public struct InvalidField: Sendable, Equatable {
        public let name: String
        public let reason: String
    }

    /// The stable code.
    public let code: ProblemCode
    /// The HTTP status.
    public let status: Int
    /// A sentence safe to show a user.
    public let detail: String
    /// The id that finds the request in the server's log (`request_id`, or `instance` on the phone-verification API).
    public let requestID: String?
    /// Seconds to wait before trying again (`Retry-After`), for 429 and 503.
    public let retryAfter: TimeInterval?
    /// The fields the server named (422).
    public let invalidFields: [InvalidField]
    /// Wrong codes still allowed, when the server says (the phone-verification API's 400).
    public let remainingAttempts: Int?

    init(_ problem: Problem, retryAfter: TimeInterval?) {
        code = ProblemCode(rawValue: problem.code)
        status = problem.status
        detail = problem.detail
        requestID = problem.requestID ?? problem.instance
        self.retryAfter = retryAfter
        remainingAttempts = problem.remainingAttempts
        invalidFields = (problem.invalidParams ?? problem.invalidParameters ?? []).map { InvalidField(name: $0.name, reason: $0.reason) }
    }
}

/// Every failure of the SDK. The server's refusals (`.server`) are apart
/// from not reaching it (`.transport`); the device's own checks have their
/// cases. No description holds a password, code, token or key.
public enum TrifactorError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server answered with a problem.
    case server(ServerProblem)
    /// No answer arrived.
    case transport(TransportFailure)
    /// The server answered something this SDK cannot read (a proxy's error page, a newer server).
    case unexpectedResponse(status: Int)
    /// The call needs a session and the client has none.
    case notSignedIn
    /// The user-presence check (Touch ID, Face ID, passcode, passphrase) did not pass.
    case presence(LocalAuthenticationError)
    /// The secure store failed.
    case secretStore(SecretStoreError)
    /// This device has no enrolled device key.
    case deviceNotEnrolled
    /// A push approval was denied, or a wrong number was picked.
    case approvalDenied
    /// A push approval or a pending sign-in ran out of time.
    case expired
    /// An argument the SDK can check before sending (an empty code, a bad amount).
    case invalidArgument(String)

    /// The server's problem, when it was one.
    public var problem: ServerProblem? { if case .server(let p) = self { p } else { nil } }

    public var description: String {
        switch self {
        case .server(let p): "\(p.detail) (\(p.code), HTTP \(p.status)\(p.requestID.map { ", request \($0)" } ?? ""))"
        case .transport(let t): t.description
        case .unexpectedResponse(let status): "The server answered HTTP \(status) in a form this client cannot read."
        case .notSignedIn: "Not signed in."
        case .presence(let e): e.message
        case .secretStore(let e): e.description
        case .deviceNotEnrolled: "This device has no device key enrolled."
        case .approvalDenied: "The sign-in was denied on the device."
        case .expired: "The sign-in ran out of time."
        case .invalidArgument(let sentence): sentence
        }
    }
}

extension TrifactorError: LocalizedError {
    /// The same sentence as `description`, so `localizedDescription` reads well on Apple platforms.
    public var errorDescription: String? { description }
}

extension LocalAuthenticationError: LocalizedError {
    public var errorDescription: String? { message }
}

extension SecretStoreError: LocalizedError {
    public var errorDescription: String? { description }
}
