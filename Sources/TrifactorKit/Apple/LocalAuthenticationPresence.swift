#if canImport(LocalAuthentication)
import LocalAuthentication

/// `UserPresence` on Apple platforms: Touch ID, Face ID or Optic ID through
/// `LAContext`, a fresh context for every prompt (so "always ask" always
/// asks). Only translates: errors go through `LocalAuthenticationError(laErrorCode:)`.
/// Compiled on Apple platforms only.
public struct LocalAuthenticationPresence: UserPresence {
    /// The fallback button's title on a biometrics-only prompt: nil shows the system's ("Enter Password"), an empty
    /// string hides it. A prompt that allows the passcode keeps the system's button (hiding it would hide the passcode).
    public let fallbackTitle: String?

    public init(fallbackTitle: String? = "") { self.fallbackTitle = fallbackTitle }

    public var availableBiometry: Biometry {
        let context = LAContext()
        var error: NSError?
        guard context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error) else { return .none }
        switch context.biometryType {
        case .touchID: return .touchID
        case .faceID: return .faceID
        #if compiler(>=5.9)
        case .opticID: return .opticID
        #endif
        default: return .none
        }
    }

    /// `canEvaluatePolicy` for `policy`, with `biometryType`, which LocalAuthentication sets whether or not it can.
    /// The decision (what blocks, what to say) is `PresenceReadiness`'s, in the core.
    public func readiness(for policy: PresencePolicy) -> PresenceReadiness {
        let context = LAContext()
        var error: NSError?
        let can = context.canEvaluatePolicy(policy == .biometrics ? .deviceOwnerAuthenticationWithBiometrics : .deviceOwnerAuthentication, error: &error)
        let biometry: Biometry
        switch context.biometryType {
        case .touchID: biometry = .touchID
        case .faceID: biometry = .faceID
        #if compiler(>=5.9)
        case .opticID: biometry = .opticID
        #endif
        default: biometry = .none
        }
        return PresenceReadiness(policy: policy, canEvaluate: can, laErrorCode: error?.code, biometry: biometry)
    }

    public func verify(reason: String, policy: PresencePolicy) async throws(LocalAuthenticationError) {
        let context = LAContext()
        if policy == .biometrics { context.localizedFallbackTitle = fallbackTitle }
        let laPolicy: LAPolicy = policy == .biometrics ? .deviceOwnerAuthenticationWithBiometrics : .deviceOwnerAuthentication
        do {
            _ = try await context.evaluatePolicy(laPolicy, localizedReason: reason)
        } catch let error as LAError {
            throw LocalAuthenticationError(laErrorCode: error.errorCode)
        } catch {
            throw .failed
        }
    }
}
#endif
