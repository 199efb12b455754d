/// An error as Apple's frameworks report it, reduced to what TrifactorKit
/// decides on: its domain and code, with its causes (`NSUnderlyingErrorKey`)
/// after it. The Apple adapters only build the chain from an `NSError`; what
/// it means is decided here, in the portable core, and tested on Linux.
public struct PlatformError: Sendable, Equatable {
    public let domain: String
    public let code: Int

    public init(domain: String, code: Int) {
        self.domain = domain
        self.code = code
    }

    /// `LAErrorDomain`.
    public static let localAuthentication = "com.apple.LocalAuthentication"
    /// `NSOSStatusErrorDomain` (Keychain and Security statuses).
    public static let osStatus = "NSOSStatusErrorDomain"
    /// `TKErrorDomain` (CryptoTokenKit, through which the Secure Enclave reports a key operation).
    public static let cryptoTokenKit = "CryptoTokenKit"

    /// What a Secure Enclave or Keychain failure means, from its chain (the error first, then its causes). A
    /// LocalAuthentication cause is the most precise and wins wherever it sits; then a Keychain status about presence;
    /// then CryptoTokenKit's own code (a cancelled Face ID sheet during a signature arrives as `TKError` −4, with no
    /// `LAError` under it). Anything else is `.unexpected` with the outermost code.
    public static func secretStoreError(_ chain: [PlatformError]) -> SecretStoreError {
        if let la = chain.first(where: { $0.domain == localAuthentication }) {
            return .presence(LocalAuthenticationError(laErrorCode: la.code))
        }
        for status in chain where status.domain == osStatus {
            if let presence = LocalAuthenticationError(osStatus: Int32(truncatingIfNeeded: status.code)) {
                return .presence(presence)
            }
        }
        for token in chain where token.domain == cryptoTokenKit {
            if let presence = tokenKitPresence(token.code) { return .presence(presence) }
        }
        return .unexpected(status: Int32(truncatingIfNeeded: chain.first?.code ?? 0))
    }

    /// `TKError.Code`'s presence cases: −4 `canceledByUser`, −5 `authenticationFailed`, −9 `authenticationNeeded`
    /// (a prompt was needed and could not be shown).
    static func tokenKitPresence(_ code: Int) -> LocalAuthenticationError? {
        switch code {
        case -4: .userCancel
        case -5: .failed
        case -9: .interactionNotAllowed
        default: nil
        }
    }
}
