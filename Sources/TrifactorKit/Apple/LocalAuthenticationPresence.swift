#if canImport(LocalAuthentication)
    import Foundation
    import LocalAuthentication

    /// `UserPresence` on Apple platforms: Touch ID, Face ID or Optic ID through `LAContext`, a fresh context for
    /// every prompt (so "always ask" always asks). Only translates: what to evaluate next is `PresenceAttempt`'s
    /// decision, errors go through `LocalAuthenticationError(laErrorCode:)`, and a cancelled task dismisses the
    /// sheet (`LAContext.invalidate()`, which fails the evaluation with `.appCancel`).
    /// Compiled on Apple platforms only.
    public struct LocalAuthenticationPresence: UserPresence, BiometryStateReading {
        /// The fallback button's title on a biometrics-only prompt: nil shows the system's ("Enter Password"), an empty
        /// string hides it. A prompt that allows the passcode keeps the system's button (hiding it would hide the passcode).
        public let fallbackTitle: String?
        /// Whether a biometrics-only check that meets a Face ID lockout offers the passcode once to unlock Face ID,
        /// then asks for Face ID again (the check still passes only on biometrics). False fails with `.biometryLockout`.
        public let passcodeClearsLockout: Bool

        public init(fallbackTitle: String? = "", passcodeClearsLockout: Bool = true) {
            self.fallbackTitle = fallbackTitle
            self.passcodeClearsLockout = passcodeClearsLockout
        }

        public var availableBiometry: Biometry {
            let context = LAContext()
            var error: NSError?
            guard context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error) else {
                return .none
            }
            return Self.biometry(context.biometryType)
        }

        /// `canEvaluatePolicy` for `policy`, with `biometryType`, which LocalAuthentication sets whether or not it can.
        /// The decision (what blocks, what to say) is `PresenceReadiness`'s, in the core.
        public func readiness(for policy: PresencePolicy) -> PresenceReadiness {
            let context = LAContext()
            var error: NSError?
            let can = context.canEvaluatePolicy(Self.laPolicy(policy), error: &error)
            return PresenceReadiness(
                policy: policy, canEvaluate: can, laErrorCode: error?.code,
                biometry: Self.biometry(context.biometryType))
        }

        public func verify(reason: String, policy: PresencePolicy) async throws(LocalAuthenticationError) {
            var attempt = PresenceAttempt(policy: policy, passcodeClearsLockout: passcodeClearsLockout)
            var action = attempt.start(readiness(for: policy))
            while true {
                switch action {
                case .pass: return
                case .fail(let error): throw error
                case .evaluate(let next): action = attempt.finished(await evaluate(next, reason: reason))
                }
            }
        }

        /// The enrolled biometrics' state now, for `BiometryChangeDetector`: `domainState.biometry.stateHash` from iOS 18
        /// and macOS 15, `evaluatedPolicyDomainState` before (which is set only after `canEvaluatePolicy` succeeded for a
        /// biometric policy). Nil when biometry cannot be evaluated now. Never prompts.
        public func biometryDomainState() -> BiometryDomainState? {
            let context = LAContext()
            var error: NSError?
            let can = context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error)
            if #available(iOS 18.0, macOS 15.0, visionOS 2.0, *) {
                return context.domainState.biometry.stateHash.map {
                    BiometryDomainState(source: .biometryStateHash, hash: $0)
                }
            }
            guard can else { return nil }
            return context.evaluatedPolicyDomainState.map {
                BiometryDomainState(source: .evaluatedPolicyDomainState, hash: $0)
            }
        }

        /// One prompt on a fresh context: nil when the user passed. A cancelled task invalidates the context, which
        /// dismisses the sheet; one cancelled before the prompt invalidates it first, so no sheet shows.
        private func evaluate(_ policy: PresencePolicy, reason: String) async -> LocalAuthenticationError? {
            let box = ContextBox()
            if policy == .biometrics { box.context.localizedFallbackTitle = fallbackTitle }
            return await withTaskCancellationHandler {
                do {
                    _ = try await box.context.evaluatePolicy(Self.laPolicy(policy), localizedReason: reason)
                    return nil
                } catch let error as LAError {
                    return LocalAuthenticationError(laErrorCode: error.errorCode)
                } catch {
                    return .failed
                }
            } onCancel: {
                box.context.invalidate()
            }
        }

        private static func laPolicy(_ policy: PresencePolicy) -> LAPolicy {
            policy == .biometrics ? .deviceOwnerAuthenticationWithBiometrics : .deviceOwnerAuthentication
        }

        private static func biometry(_ type: LABiometryType) -> Biometry {
            switch type {
            case .touchID: return .touchID
            case .faceID: return .faceID
            #if compiler(>=5.9)
                case .opticID: return .opticID
            #endif
            default: return .none
            }
        }
    }

    /// One prompt's `LAContext`, shared with the cancellation handler. `@unchecked Sendable`: the context is set up
    /// before either side sees it, and afterwards the only call from the other side is `invalidate()`, which Apple
    /// documents as the way to stop an evaluation in progress (so made while one runs) and as harmless when repeated.
    private final class ContextBox: @unchecked Sendable {
        let context = LAContext()
    }
#endif
