public import Foundation

/// Which WebAuthn ceremony a passkey sheet was showing: some platform answers mean one thing only in one of them.
public enum PasskeyCeremony: Sendable, Equatable {
    /// `navigator.credentials.create`: enrolling a passkey.
    case registration
    /// `navigator.credentials.get`: signing in or stepping up with one.
    case assertion
}

/// Why a passkey sheet gave no credential. Each case has its own sentence, so a request the
/// platform refused (most often the app's Associated Domains) never reads as "That did not match",
/// and a passkey the account already holds says so instead of failing.
/// The platform's own reason is kept for logs (`debugDescription`) and never shown.
public struct PasskeyError: Error, Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// A stable code, pinned by a test: an app may switch on it and send it to its analytics.
    public enum Code: String, Sendable, Equatable, CaseIterable {
        /// The user closed the sheet.
        case cancelled = "passkey_cancelled"
        /// Registration found one of the account's passkeys on this device (`excludeCredentials` matched).
        case alreadyRegistered = "passkey_already_registered"
        /// The platform refused the request (`ASAuthorizationError.failed`): bad options, or the app's
        /// Associated Domains (`webcredentials:`) do not cover the relying party. The reason is in `platformReason`.
        case refused = "passkey_refused"
        /// No passkey for this account is available on this device (`.notInteractive`).
        case noPasskey = "passkey_none_available"
        /// This device is not set up to create passkeys (iOS 26's `.deviceNotConfiguredForPasskeyCreation`).
        case deviceNotConfigured = "passkey_device_not_configured"
        /// The server's options could not be read (a credential id or challenge that is not base64url).
        case invalidOptions = "passkey_invalid_options"
        /// Another passkey sheet of this app is showing.
        case busy = "passkey_busy"
        /// The sheet answered with something that is not a passkey credential of the ceremony asked for.
        case unexpectedCredential = "passkey_unexpected_credential"
        /// Anything else the platform reported.
        case unknown = "passkey_unknown"
    }

    /// What happened.
    public let code: Code
    /// The platform's error and its causes (outermost first), for logs.
    public let platform: [PlatformError]
    /// The platform's own sentence (`localizedDescription`, or the failure reason), for logs only:
    /// it names entitlements and domains, which are for the developer, not the user.
    public let platformReason: String?

    public init(_ code: Code, platform: [PlatformError] = [], platformReason: String? = nil) {
        self.code = code
        self.platform = platform
        self.platformReason = platformReason
    }

    /// `ASAuthorizationErrorDomain`.
    public static let authorizationDomain = "com.apple.AuthenticationServices.AuthorizationError"
    /// `WKErrorDomain`: where iOS 17.4–17.x, which has `excludedCredentials` but not yet
    /// `.matchedExcludedCredential`, was reported (Apple developer forums) to put the excluded-credential match (code 8).
    public static let webKitDomain = "WKErrorDomain"

    /// What the platform's failure means, from its error chain (`NSError` and its `NSUnderlyingErrorKey`s) and
    /// its localized reason. The first `ASAuthorizationError` decides: 1001 `canceled`, 1004 `failed`, 1005
    /// `notInteractive`, 1006 `matchedExcludedCredential`, 1010 `deviceNotConfiguredForPasskeyCreation`; 1000
    /// `unknown`, 1002 `invalidResponse`, 1003 `notHandled` and codes added later are `.unknown` (Apple says passkey
    /// requests only produce canceled, failed and matchedExcludedCredential). A registration that WebKit refused
    /// with code 8 is the excluded-credential match.
    public static func fromPlatform(_ chain: [PlatformError], reason: String?, ceremony: PasskeyCeremony)
        -> PasskeyError
    {
        if let authorization = chain.first(where: { $0.domain == authorizationDomain }) {
            let code: Code =
                switch authorization.code {
                case 1001: .cancelled
                case 1004: .refused
                case 1005: .noPasskey
                case 1006: ceremony == .registration ? .alreadyRegistered : .unknown
                case 1010: .deviceNotConfigured
                default: .unknown
                }
            return PasskeyError(code, platform: chain, platformReason: reason)
        }
        if ceremony == .registration, chain.contains(PlatformError(domain: webKitDomain, code: 8)) {
            return PasskeyError(.alreadyRegistered, platform: chain, platformReason: reason)
        }
        return PasskeyError(.unknown, platform: chain, platformReason: reason)
    }

    /// Whether the user chose to stop (nothing to report as an error).
    public var isCancellation: Bool { code == .cancelled }

    /// A sentence an app can show as is.
    public var message: String {
        switch code {
        case .cancelled: "You cancelled."
        case .alreadyRegistered: "This passkey is already on your account, so there is nothing to add."
        case .refused: "Passkeys cannot be used in this app right now. Use another way to sign in."
        case .noPasskey: "There is no passkey for this account on this device."
        case .deviceNotConfigured:
            "This device is not set up to save passkeys. Turn on iCloud Keychain in Settings and try again."
        case .invalidOptions: "The server sent a passkey request this app cannot read."
        case .busy: "A passkey request is already showing."
        case .unexpectedCredential: "The passkey sheet did not return a passkey."
        case .unknown: "The passkey could not be used. Try again."
        }
    }

    public var description: String { message }

    /// The message with the code, the platform's chain and its reason: for logs, never for the user.
    public var debugDescription: String {
        let chain = platform.map { "\($0.domain) \($0.code)" }.joined(separator: " ← ")
        return "\(code.rawValue): \(message)" + (chain.isEmpty ? "" : " [\(chain)]")
            + (platformReason.map { " \($0)" } ?? "")
    }
}

extension PasskeyError: LocalizedError {
    public var errorDescription: String? { message }
}
