/// One presence check as LocalAuthentication runs it: which policy to evaluate next, given what the device
/// reported before the first prompt and what each prompt answered. A plain value with no IO, so the Apple
/// adapter is a loop over its actions and every decision is tested on Linux.
///
/// The case it exists for: a biometrics-only check while Face ID is locked out after too many tries. Without
/// help the user is stuck until they lock and unlock the phone. Where the caller allows it, the passcode is
/// offered once (a `.deviceOwnerAuthentication` prompt, which is what resets the lockout) and then biometrics
/// are asked for again, so a biometrics-only check still passes only on biometrics: the passcode unlocks
/// Face ID, it never stands for it. A check that already allows the passcode needs none of this: the system
/// itself offers the passcode when biometry is locked.
public struct PresenceAttempt: Sendable, Equatable {
    /// What to do next.
    public enum Action: Sendable, Equatable {
        /// Show a prompt for this policy, on a fresh context.
        case evaluate(PresencePolicy)
        /// The check passed.
        case pass
        /// The check did not pass, for this reason.
        case fail(LocalAuthenticationError)
    }

    /// The policy the caller asked for.
    public let policy: PresencePolicy
    /// Whether a biometry lockout may be cleared with the passcode (once) during a biometrics-only check.
    public let passcodeClearsLockout: Bool
    private var passcodeOffered = false
    private var clearingLockout = false
    /// The end, once reached: every later call answers it again.
    private var outcome: Action?

    public init(policy: PresencePolicy, passcodeClearsLockout: Bool) {
        self.policy = policy
        self.passcodeClearsLockout = passcodeClearsLockout
    }

    /// The first step, from the device's readiness for `policy` (`canEvaluatePolicy`). Anything that blocks the
    /// check, other than a lockout that may be cleared, fails at once: prompting would fail the same way, with
    /// nothing on screen to tell the user why.
    public mutating func start(_ readiness: PresenceReadiness) -> Action {
        if let outcome { return outcome }
        guard let blocker = readiness.blocker else { return .evaluate(policy) }
        if blocker == .biometryLockout {
            if policy == .biometricsOrPasscode { return .evaluate(.biometricsOrPasscode) }
            if let unlock = offerPasscode() { return unlock }
        }
        return end(.fail(blocker))
    }

    /// The step after a prompt for the policy of the last `.evaluate`: `failure` is nil when the user passed.
    public mutating func finished(_ failure: LocalAuthenticationError?) -> Action {
        if let outcome { return outcome }
        if clearingLockout {
            clearingLockout = false
            // The passcode unlocked biometry: now the check that was asked for.
            return failure.map { end(.fail($0)) } ?? .evaluate(.biometrics)
        }
        guard let failure else { return end(.pass) }
        // Locked out by this very prompt's failed tries: the same offer, at most once per check.
        if failure == .biometryLockout, let unlock = offerPasscode() { return unlock }
        return end(.fail(failure))
    }

    private mutating func offerPasscode() -> Action? {
        guard policy == .biometrics, passcodeClearsLockout, !passcodeOffered else { return nil }
        passcodeOffered = true
        clearingLockout = true
        return .evaluate(.biometricsOrPasscode)
    }

    private mutating func end(_ action: Action) -> Action {
        outcome = action
        return action
    }
}
