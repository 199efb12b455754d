/// Why a presence check did not pass: one case per real failure, each with
/// a message an app can show. `init(laErrorCode:)` and `init(osStatus:)`
/// map the platforms' raw codes here, in the portable core (tested on Linux),
/// so the Apple adapters only pass numbers through.
public enum LocalAuthenticationError: Error, Sendable, Equatable, CaseIterable {
    /// The user tapped Cancel.
    case userCancel
    /// The user chose the fallback button ("Enter Password").
    case userFallback
    /// The system cancelled (another app came forward, the screen locked).
    case systemCancel
    /// The app cancelled (`invalidate()`).
    case appCancel
    /// The user did not match (too many tries for this prompt).
    case failed
    /// The device has no usable biometry (none, or disabled).
    case biometryNotAvailable
    /// Biometry exists but no finger or face is enrolled.
    case biometryNotEnrolled
    /// Too many failures: biometry is locked until the passcode is entered.
    case biometryLockout
    /// The device has no passcode, so nothing can be protected.
    case passcodeNotSet
    /// The enrolled biometrics changed since the key or item was made: it is gone for good.
    case keyInvalidated
    /// A prompt cannot be shown now (the app is in the background, or `--no-input`).
    case interactionNotAllowed

    /// A sentence an app can show as is.
    public var message: String {
        switch self {
        case .userCancel: "You cancelled."
        case .userFallback: "Use your passcode instead."
        case .systemCancel: "The check was interrupted. Try again."
        case .appCancel: "The check was cancelled."
        case .failed: "That did not match. Try again."
        case .biometryNotAvailable: "Face ID or Touch ID is not available on this device."
        case .biometryNotEnrolled: "Set up Face ID or Touch ID in Settings first."
        case .biometryLockout: "Face ID or Touch ID is locked. Enter your passcode to unlock it."
        case .passcodeNotSet: "Set a device passcode in Settings first."
        case .keyInvalidated: "Your Face ID or Touch ID changed, so this device must be set up again."
        case .interactionNotAllowed: "The check cannot be shown right now."
        }
    }

    /// Whether the user chose to stop (nothing to report as an error).
    public var isCancellation: Bool { self == .userCancel || self == .appCancel || self == .systemCancel }

    /// From `LAError.Code`'s raw value (LocalAuthentication). Unknown codes are `.failed`.
    public init(laErrorCode code: Int) {
        switch code {
        case -1: self = .failed  // authenticationFailed
        case -2: self = .userCancel  // userCancel
        case -3: self = .userFallback  // userFallback
        case -4: self = .systemCancel  // systemCancel
        case -5: self = .passcodeNotSet  // passcodeNotSet
        case -6: self = .biometryNotAvailable  // biometryNotAvailable (touchIDNotAvailable)
        case -7: self = .biometryNotEnrolled  // biometryNotEnrolled
        case -8: self = .biometryLockout  // biometryLockout
        case -9: self = .appCancel  // appCancel
        case -10: self = .appCancel  // invalidContext: the context was invalidated
        // Companion/watch not available, biometryNotPaired, biometryDisconnected.
        case -11, -12, -13: self = .biometryNotAvailable
        case -1004: self = .interactionNotAllowed  // notInteractive
        default: self = .failed
        }
    }

    /// From a Keychain or CryptoKit `OSStatus` met while reading a gated item or
    /// signing with a gated key; nil when the status is not about presence.
    public init?(osStatus status: Int32) {
        switch status {
        case -128: self = .userCancel  // errSecUserCanceled
        case -25293: self = .failed  // errSecAuthFailed
        case -25308: self = .interactionNotAllowed  // errSecInteractionNotAllowed
        default: return nil  // errSecItemNotFound, errSecMissingEntitlement…: not about presence
        }
    }
}
