import API
public import Foundation

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
        code = problem.code
        status = problem.status
        detail = problem.detail
        requestID = problem.requestID ?? problem.instance
        self.retryAfter = retryAfter
        remainingAttempts = problem.remainingAttempts
        invalidFields = (problem.invalidParams ?? problem.invalidParameters ?? []).map {
            InvalidField(name: $0.name, reason: $0.reason)
        }
    }
}

/// Every failure of the SDK, as one value with a stable `code`: the
/// server's refusals (`.server`, with its `problem`) are apart from not
/// reaching it (`.transport`); the device's own checks have codes of their
/// own. A struct, not an enum, so that a later SDK can add a code without
/// breaking an app's `switch` (switch on `code` with a `default`). No
/// description holds a password, code, token or key.
///
///     do { try await client.stepUp(hint, with: .code(typed)) }
///     catch let error as TrifactorError where error.problem?.code == .invalidCode { … }
///     catch let error as TrifactorError where error.code == .transport { … }
public struct TrifactorError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure it is. Open: compare against the constants, and keep a `default` in a `switch`.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The server answered with a problem (`problem` holds it).
        public static let server = Code(rawValue: "server")
        /// No answer arrived (`transportFailure` says why).
        public static let transport = Code(rawValue: "transport")
        /// The server answered something this SDK cannot read (a proxy's error page, a newer server); `httpStatus` holds its status.
        public static let unexpectedResponse = Code(rawValue: "unexpected_response")
        /// The call needs a session and the client has none.
        public static let notSignedIn = Code(rawValue: "not_signed_in")
        /// The user-presence check (Touch ID, Face ID, passcode, passphrase) did not pass (`presenceFailure` says how).
        public static let presence = Code(rawValue: "presence")
        /// The secure store failed (`storeFailure` says how).
        public static let secretStore = Code(rawValue: "secret_store")
        /// This device has no enrolled device key.
        public static let deviceNotEnrolled = Code(rawValue: "device_not_enrolled")
        /// A push approval was denied, or a wrong number was picked.
        public static let approvalDenied = Code(rawValue: "approval_denied")
        /// A push approval or a pending sign-in ran out of time.
        public static let expired = Code(rawValue: "expired")
        /// An argument the SDK can check before sending (an empty code, a bad amount); `description` says which.
        public static let invalidArgument = Code(rawValue: "invalid_argument")
        /// Sign in with Trifactor: the provider refused the authorization or the token request (`oauthError` holds
        /// its `error` code, such as `access_denied` or `invalid_grant`).
        public static let authorizationRefused = Code(rawValue: "authorization_refused")
        /// Sign in with Trifactor: the callback does not belong to this sign-in (another `state`, another `iss`, no
        /// `code`); `description` says which.
        public static let callbackRejected = Code(rawValue: "callback_rejected")
        /// A payment pushed to the device does not hash to what its approval is bound to (or this device cannot hash
        /// it): nothing was signed.
        public static let actionMismatch = Code(rawValue: "action_mismatch")
        /// Sign in with Trifactor: the ID token failed a check (signature, issuer, audience, expiry, nonce, level);
        /// `description` says which.
        public static let idTokenRejected = Code(rawValue: "id_token_rejected")
        /// Sign in with Trifactor: the provider's metadata names another issuer or lacks an endpoint.
        public static let providerMismatch = Code(rawValue: "provider_mismatch")
        /// Sign in with Trifactor: the user closed the browser before signing in.
        public static let cancelled = Code(rawValue: "cancelled")
    }

    /// What kind of failure it is.
    public let code: Code
    /// The server's problem, for `.server`.
    public let problem: ServerProblem?
    /// Why no answer arrived, for `.transport`.
    public let transportFailure: TransportFailure?
    /// How the presence check failed, for `.presence`.
    public let presenceFailure: LocalAuthenticationError?
    /// How the secure store failed, for `.secretStore`.
    public let storeFailure: SecretStoreError?
    /// The HTTP status of an answer this SDK cannot read, for `.unexpectedResponse`.
    public let httpStatus: Int?
    /// The provider's OAuth error, for `.authorizationRefused`.
    public let oauthError: OAuthError?
    private let sentence: String?

    private init(
        _ code: Code, problem: ServerProblem? = nil, transport: TransportFailure? = nil,
        presence: LocalAuthenticationError? = nil,
        store: SecretStoreError? = nil, status: Int? = nil, oauth: OAuthError? = nil, sentence: String? = nil
    ) {
        self.code = code
        self.problem = problem
        transportFailure = transport
        presenceFailure = presence
        storeFailure = store
        httpStatus = status
        oauthError = oauth
        self.sentence = sentence
    }

    /// The server answered with `problem`.
    public static func server(_ problem: ServerProblem) -> TrifactorError { TrifactorError(.server, problem: problem) }
    /// No answer arrived.
    public static func transport(_ failure: TransportFailure) -> TrifactorError {
        TrifactorError(.transport, transport: failure)
    }
    /// The server answered HTTP `status` in a form this SDK cannot read.
    public static func unexpectedResponse(status: Int) -> TrifactorError {
        TrifactorError(.unexpectedResponse, status: status)
    }
    /// The call needs a session and the client has none.
    public static let notSignedIn = TrifactorError(.notSignedIn)
    /// The user-presence check did not pass.
    public static func presence(_ failure: LocalAuthenticationError) -> TrifactorError {
        TrifactorError(.presence, presence: failure)
    }
    /// The secure store failed.
    public static func secretStore(_ failure: SecretStoreError) -> TrifactorError {
        TrifactorError(.secretStore, store: failure)
    }
    /// This device has no enrolled device key.
    public static let deviceNotEnrolled = TrifactorError(.deviceNotEnrolled)
    /// A push approval was denied, or a wrong number was picked.
    public static let approvalDenied = TrifactorError(.approvalDenied)
    /// A push approval or a pending sign-in ran out of time.
    public static let expired = TrifactorError(.expired)
    /// An argument the SDK checked before sending, with the sentence that says what is wrong.
    public static func invalidArgument(_ sentence: String) -> TrifactorError {
        TrifactorError(.invalidArgument, sentence: sentence)
    }

    /// The provider refused the authorization or a token request with `error`.
    public static func authorizationRefused(_ error: OAuthError) -> TrifactorError {
        TrifactorError(.authorizationRefused, oauth: error)
    }
    /// The callback does not belong to this sign-in, for the reason `sentence` gives.
    public static func callbackRejected(_ sentence: String) -> TrifactorError {
        TrifactorError(.callbackRejected, sentence: sentence)
    }
    /// The payment an approval shows is not the one it is bound to, for the reason `sentence` gives.
    public static func actionMismatch(_ sentence: String) -> TrifactorError {
        TrifactorError(.actionMismatch, sentence: sentence)
    }
    /// The ID token failed the check `sentence` names.
    public static func idTokenRejected(_ sentence: String) -> TrifactorError {
        TrifactorError(.idTokenRejected, sentence: sentence)
    }
    /// The provider's metadata does not fit the configured issuer, for the reason `sentence` gives.
    public static func providerMismatch(_ sentence: String) -> TrifactorError {
        TrifactorError(.providerMismatch, sentence: sentence)
    }
    /// The user closed the browser before signing in.
    public static let cancelled = TrifactorError(.cancelled)

    /// Whether the server refused with `code`.
    public func isProblem(_ code: ProblemCode) -> Bool { problem?.code == code }

    public var description: String {
        if let p = problem {
            return "\(p.detail) (\(p.code), HTTP \(p.status)\(p.requestID.map { ", request \($0)" } ?? ""))"
        }
        if let t = transportFailure { return t.description }
        if let e = presenceFailure { return e.message }
        if let e = storeFailure { return e.description }
        if let status = httpStatus { return "The server answered HTTP \(status) in a form this client cannot read." }
        if let oauth = oauthError { return oauth.description }
        if let sentence { return sentence }
        switch code {
        case .notSignedIn: return "Not signed in."
        case .deviceNotEnrolled: return "This device has no device key enrolled."
        case .approvalDenied: return "The sign-in was denied on the device."
        case .expired: return "The sign-in ran out of time."
        case .cancelled: return "The sign-in was cancelled in the browser."
        default: return "Trifactor failed (\(code))."
        }
    }
}

/// An OAuth 2.0 error as the provider sent it (RFC 6749 §4.1.2.1 and §5.2): its code and, for logs, its own words.
public struct OAuthError: Sendable, Equatable, CustomStringConvertible {
    /// The `error` code: `access_denied`, `login_required`, `invalid_grant`, ….
    public let error: String
    /// The provider's `error_description`, if any: for logs, not for users (it is not localized).
    public let errorDescription: String?

    /// An error with `error` and its optional description.
    public init(error: String, errorDescription: String? = nil) {
        self.error = error
        self.errorDescription = errorDescription
    }

    /// A sentence for the user, chosen by the code (the provider's own words stay in `errorDescription`).
    public var description: String {
        switch error {
        case "access_denied": "The sign-in was refused or cancelled at Trifactor."
        case "login_required", "interaction_required", "consent_required", "account_selection_required":
            "Trifactor needs the user to sign in again (\(error))."
        case "invalid_grant": "The sign-in is no longer valid: start again."
        default: "Trifactor refused the sign-in (\(error))."
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
