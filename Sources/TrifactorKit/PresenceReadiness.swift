/// Whether a presence check can be shown now, and if not, why: what an app
/// says before it prompts ("Face ID is locked: enter your passcode",
/// "Set up Face ID in Settings") instead of prompting in vain. Apple reports
/// the kind of biometry even when it cannot be used now, so `biometry` is the
/// hardware's, and `blocker` says what stands in the way.
public struct PresenceReadiness: Sendable, Equatable {
    /// The biometry this device has (`.none`: no biometric hardware).
    public let biometry: Biometry
    /// What stops the check now; nil when it can be shown.
    public let blocker: LocalAuthenticationError?

    public init(biometry: Biometry, blocker: LocalAuthenticationError?) {
        self.biometry = biometry
        self.blocker = blocker
    }

    /// From what `LAContext.canEvaluatePolicy(_:error:)` answered for `policy`: whether it can, the `LAError` code
    /// when it cannot, and `biometryType`, which LocalAuthentication sets either way.
    public init(policy: PresencePolicy, canEvaluate: Bool, laErrorCode: Int?, biometry: Biometry) {
        self.biometry = biometry
        guard !canEvaluate else {
            blocker = nil
            return
        }
        var reason = laErrorCode.map(LocalAuthenticationError.init(laErrorCode:)) ?? .biometryNotAvailable
        // Biometrics only on a device without the hardware: "not available", whatever code came with it.
        if policy == .biometrics && biometry == .none && reason != .passcodeNotSet { reason = .biometryNotAvailable }
        blocker = reason
    }

    /// Whether the check can be shown now.
    public var isReady: Bool { blocker == nil }

    /// The biometry's name as people read it ("Face ID"), or "your passcode" without one.
    public var name: String {
        switch biometry {
        case .faceID: "Face ID"
        case .touchID: "Touch ID"
        case .opticID: "Optic ID"
        case .none: "your passcode"
        }
    }

    /// A sentence for the app to show instead of prompting; nil when ready.
    public var message: String? {
        guard let blocker else { return nil }
        switch blocker {
        case .biometryLockout: return "\(name) is locked after too many tries. Enter your passcode to unlock it."
        case .biometryNotEnrolled: return biometry == .none ? blocker.message : "Set up \(name) in Settings first."
        case .biometryNotAvailable:
            // LAError −6 (and the disconnected-accessory codes) cover "turned off for this app" and hardware away alike.
            return biometry == .none
                ? "This device has no Face ID or Touch ID."
                : "\(name) is not available right now (it may be turned off for this app in Settings)."
        default: return blocker.message
        }
    }
}

extension UserPresence {
    /// What a device that cannot tell more reports: ready, with its biometry, for a policy it can meet.
    public func readiness(for policy: PresencePolicy) -> PresenceReadiness {
        PresenceReadiness(
            biometry: availableBiometry,
            blocker: policy == .biometrics && availableBiometry == .none ? .biometryNotAvailable : nil)
    }
}
