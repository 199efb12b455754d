import Foundation
import Testing
import TrifactorKit

@Suite("A presence check's steps: a Face ID lockout cleared once with the passcode where the caller allows it")
struct PresenceAttemptTests {
    static let ready = PresenceReadiness(biometry: .faceID, blocker: nil)
    static let lockedOut = PresenceReadiness(biometry: .faceID, blocker: .biometryLockout)

    /// Runs an attempt to its end, answering each prompt from `answers` (nil passes), and returns the policies prompted for.
    static func run(
        _ policy: PresencePolicy, allowed: Bool, readiness: PresenceReadiness,
        answers: [LocalAuthenticationError?]
    ) -> (prompts: [PresencePolicy], end: PresenceAttempt.Action) {
        var attempt = PresenceAttempt(policy: policy, passcodeClearsLockout: allowed)
        var answers = answers[...]
        var prompts: [PresencePolicy] = []
        var action = attempt.start(readiness)
        while case .evaluate(let next) = action {
            prompts.append(next)
            action = attempt.finished(answers.popFirst() ?? nil)
        }
        return (prompts, action)
    }

    @Test(
        "biometrics only, locked out, passcode allowed: the passcode once, then Face ID again, and only Face ID passes")
    func lockoutClearedThenBiometrics() {
        let passed = Self.run(.biometrics, allowed: true, readiness: Self.lockedOut, answers: [nil, nil])
        #expect(passed.prompts == [.biometricsOrPasscode, .biometrics] && passed.end == .pass)
        // The passcode unlocked Face ID, but a failed Face ID after it fails the check: the passcode never stands for it.
        let failed = Self.run(.biometrics, allowed: true, readiness: Self.lockedOut, answers: [nil, .failed])
        #expect(failed.prompts == [.biometricsOrPasscode, .biometrics] && failed.end == .fail(.failed))
    }

    @Test("the passcode is offered at most once: locked out again after it, the check fails with the lockout")
    func offeredOnce() {
        let r = Self.run(.biometrics, allowed: true, readiness: Self.lockedOut, answers: [nil, .biometryLockout])
        #expect(r.prompts == [.biometricsOrPasscode, .biometrics] && r.end == .fail(.biometryLockout))
    }

    @Test("locked out by this prompt's own tries: the same single offer of the passcode")
    func lockedOutDuringPrompt() {
        let r = Self.run(.biometrics, allowed: true, readiness: Self.ready, answers: [.biometryLockout, nil, nil])
        #expect(r.prompts == [.biometrics, .biometricsOrPasscode, .biometrics] && r.end == .pass)
    }

    @Test("cancelling the passcode sheet ends the check as a cancel, with no Face ID prompt after it")
    func passcodeCancelled() {
        let r = Self.run(.biometrics, allowed: true, readiness: Self.lockedOut, answers: [.userCancel])
        #expect(r.prompts == [.biometricsOrPasscode] && r.end == .fail(.userCancel))
    }

    @Test("where the caller does not allow it, a lockout fails at once without prompting")
    func notAllowed() {
        let r = Self.run(.biometrics, allowed: false, readiness: Self.lockedOut, answers: [])
        #expect(r.prompts.isEmpty && r.end == .fail(.biometryLockout))
        let during = Self.run(.biometrics, allowed: false, readiness: Self.ready, answers: [.biometryLockout])
        #expect(during.prompts == [.biometrics] && during.end == .fail(.biometryLockout))
    }

    @Test("a check that allows the passcode is prompted as is when locked out: the system offers the passcode itself")
    func passcodePolicyLockedOut() {
        let r = Self.run(
            .biometricsOrPasscode, allowed: false,
            readiness: PresenceReadiness(biometry: .faceID, blocker: .biometryLockout), answers: [nil])
        #expect(r.prompts == [.biometricsOrPasscode] && r.end == .pass)
    }

    @Test(
        "other blockers fail before any prompt, with their own reason",
        arguments: [
            LocalAuthenticationError.biometryNotEnrolled, .biometryNotAvailable, .passcodeNotSet,
        ])
    func blockers(blocker: LocalAuthenticationError) {
        let r = Self.run(
            .biometrics, allowed: true, readiness: PresenceReadiness(biometry: .faceID, blocker: blocker), answers: [])
        #expect(r.prompts.isEmpty && r.end == .fail(blocker))
    }

    @Test("a ready device prompts once for the policy asked; once ended, the attempt keeps its answer")
    func plain() {
        var attempt = PresenceAttempt(policy: .biometrics, passcodeClearsLockout: true)
        #expect(attempt.start(Self.ready) == .evaluate(.biometrics))
        #expect(attempt.finished(.failed) == .fail(.failed))
        #expect(attempt.finished(nil) == .fail(.failed))
        #expect(attempt.start(Self.ready) == .fail(.failed))
    }
}

@Suite("'Your Face ID changed': the biometric state recorded at enrolment and compared later")
struct BiometryChangeTests {
    static let enrolled = BiometryDomainState(source: .evaluatedPolicyDomainState, hash: Data([1, 2, 3]))

    @Test("the same state is unchanged; another face or finger is a change")
    func changed() async throws {
        let detector = BiometryChangeDetector(store: MemorySecretStore())
        #expect(try await detector.record(Self.enrolled))
        #expect(try await detector.check(Self.enrolled) == .unchanged)
        #expect(
            try await detector.check(BiometryDomainState(source: .evaluatedPolicyDomainState, hash: Data([9])))
                == .changed)
    }

    @Test("nothing recorded, or a state that cannot be read now, is never 'unchanged'")
    func unknowns() async throws {
        let detector = BiometryChangeDetector(store: MemorySecretStore())
        #expect(try await detector.check(Self.enrolled) == .notRecorded)
        try await detector.record(Self.enrolled)
        #expect(try await detector.check(nil) == .unreadable)
    }

    @Test("a state from the other API (the OS updated across iOS 18) proves nothing either way")
    func otherSource() async throws {
        let detector = BiometryChangeDetector(store: MemorySecretStore())
        try await detector.record(Self.enrolled)
        #expect(
            try await detector.check(BiometryDomainState(source: .biometryStateHash, hash: Self.enrolled.hash))
                == .cannotCompare)
    }

    @Test("enrolling again when the state cannot be read removes the old record, so it never judges the new enrolment")
    func unreadableAtEnrolment() async throws {
        let store = MemorySecretStore()
        let detector = BiometryChangeDetector(store: store, key: "bio")
        try await detector.record(Self.enrolled)
        #expect(try await !detector.record(nil))
        #expect(try await !store.contains("bio"))
        #expect(
            try await detector.check(BiometryDomainState(source: .evaluatedPolicyDomainState, hash: Data([9])))
                == .notRecorded)
    }

    @Test("a damaged record is an error, not 'unchanged'; forgetting removes the record")
    func damagedAndForget() async throws {
        let store = MemorySecretStore()
        let detector = BiometryChangeDetector(store: store, key: "bio")
        try await store.set(Data("garbage".utf8), for: "bio", protection: .afterFirstUnlockThisDeviceOnly)
        await #expect(throws: SecretStoreError.damaged("the recorded biometric state is unreadable")) {
            try await detector.check(Self.enrolled)
        }
        try await detector.forget()
        #expect(try await detector.check(Self.enrolled) == .notRecorded)
    }
}
