import Foundation
import Testing
import TrifactorKitTesting

@testable import TrifactorKit

@Suite("Presence lock and local-authentication errors")
struct PresenceTests {
    @Test("always asks on every unlock: a fresh prompt each time")
    func always() async throws {
        let presence = ScriptedUserPresence()
        let lock = PresenceLock(policy: .always, presence: presence, clock: ManualClock())
        for _ in 0..<3 { try await lock.unlock(reason: "Open the app") }
        #expect(presence.prompts == 3)
    }

    @Test("after a timeout: no prompt within it, a prompt once it has passed")
    func timeout() async throws {
        let clock = ManualClock()
        let presence = ScriptedUserPresence()
        let lock = PresenceLock(policy: .afterTimeout(300), presence: presence, clock: clock)
        try await lock.unlock(reason: "r")
        clock.advance(299)
        try await lock.unlock(reason: "r")
        #expect(presence.prompts == 1)
        clock.advance(1)
        #expect(lock.needsPresence)
        try await lock.unlock(reason: "r")
        #expect(presence.prompts == 2)
        lock.lock()
        #expect(lock.needsPresence)
    }

    @Test("after the background: a short absence asks nothing, five minutes away asks again")
    func background() async throws {
        let clock = ManualClock()
        let presence = ScriptedUserPresence()
        let lock = PresenceLock(policy: .afterBackground(300), presence: presence, clock: clock)
        #expect(lock.needsPresence)  // first use
        try await lock.unlock(reason: "r")
        lock.didEnterBackground()
        clock.advance(120)
        lock.willEnterForeground()
        #expect(!lock.needsPresence)
        clock.advance(3600)  // a long time in the foreground does not matter
        #expect(!lock.needsPresence)
        lock.didEnterBackground()
        clock.advance(300)
        lock.willEnterForeground()
        #expect(lock.needsPresence)
        try await lock.unlock(reason: "r")
        #expect(presence.prompts == 2)
    }

    @Test("a failed or cancelled prompt leaves the lock locked")
    func failureKeepsLocked() async throws {
        let presence = ScriptedUserPresence(script: [.userCancel, .failed])
        let lock = PresenceLock(policy: .afterTimeout(300), presence: presence, clock: ManualClock())
        await #expect(throws: LocalAuthenticationError.userCancel) { try await lock.unlock(reason: "r") }
        await #expect(throws: LocalAuthenticationError.failed) { try await lock.unlock(reason: "r") }
        #expect(lock.needsPresence)
        try await lock.unlock(reason: "r")
        #expect(!lock.needsPresence)
    }

    @Test(
        "LAError codes map to one case each",
        arguments: [
            (-1, LocalAuthenticationError.failed), (-2, .userCancel), (-3, .userFallback), (-4, .systemCancel),
            (-5, .passcodeNotSet),
            (-6, .biometryNotAvailable), (-7, .biometryNotEnrolled), (-8, .biometryLockout), (-9, .appCancel),
            (-10, .appCancel),
            (-1004, .interactionNotAllowed), (-99, .failed),
        ])
    func laErrorCodes(code: Int, expected: LocalAuthenticationError) {
        #expect(LocalAuthenticationError(laErrorCode: code) == expected)
    }

    @Test("Keychain statuses: a cancelled prompt is never 'not found'; statuses not about presence map to nothing")
    func osStatuses() {
        #expect(LocalAuthenticationError(osStatus: -128) == .userCancel)
        #expect(LocalAuthenticationError(osStatus: -25293) == .failed)
        #expect(LocalAuthenticationError(osStatus: -25308) == .interactionNotAllowed)
        // ErrSecItemNotFound: missing, not a presence failure.
        #expect(LocalAuthenticationError(osStatus: -25300) == nil)
        #expect(LocalAuthenticationError(osStatus: -34018) == nil)  // errSecMissingEntitlement: a signing problem
        #expect(LocalAuthenticationError(osStatus: 0) == nil)
        #expect(LocalAuthenticationError(osStatus: -25299) == nil)  // errSecDuplicateItem: not about presence
    }

    @Test("every failure has its own message an app can show")
    func messages() {
        let messages = LocalAuthenticationError.allCases.map(\.message)
        #expect(Set(messages).count == LocalAuthenticationError.allCases.count)
        #expect(messages.allSatisfy { $0.hasSuffix(".") && !$0.isEmpty })
        #expect(LocalAuthenticationError.allCases.filter(\.isCancellation) == [.userCancel, .systemCancel, .appCancel])
    }
}

/// A presence check that stays on screen until the test answers it, counting prompts and the policies they asked with.
final class HeldPresence: UserPresence, @unchecked Sendable {
    // @unchecked Sendable: every field is read and written under `lock`.
    private let lock = NSLock()
    private var waiting: [CheckedContinuation<Void, any Error>] = []
    private var asked: [PresencePolicy] = []
    var availableBiometry: Biometry { .faceID }

    var policies: [PresencePolicy] { lock.withLock { asked } }
    var onScreen: Int { lock.withLock { waiting.count } }

    func verify(reason: String, policy: PresencePolicy) async throws(LocalAuthenticationError) {
        do {
            // Cancelled, the sheet is dismissed: the prompt ends with the app's cancel, as LAContext.invalidate() does.
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    lock.withLock {
                        asked.append(policy)
                        waiting.append(continuation)
                    }
                }
            } onCancel: {
                answer(.appCancel)
            }
        } catch let error as LocalAuthenticationError {
            throw error
        } catch {
            throw .systemCancel
        }
    }

    /// Answers the prompt on screen.
    func answer(_ error: LocalAuthenticationError? = nil) {
        let next = lock.withLock { waiting.isEmpty ? nil : waiting.removeFirst() }
        if let error { next?.resume(throwing: error) } else { next?.resume() }
    }

    /// Waits until `count` prompts were asked for.
    func untilAsked(_ count: Int) async {
        while policies.count < count { try? await Task.sleep(for: .milliseconds(5)) }
    }
}

@Suite("Overlapping unlocks")
struct OverlappingUnlockTests {
    @Test("two unlocks at once share one prompt, and its answer: both pass, or both get its error")
    func shared() async throws {
        let presence = HeldPresence()
        let lock = PresenceLock(policy: .always, presence: presence, clock: ManualClock())
        async let first: Void = lock.unlock(reason: "Approve")
        async let second: Void = lock.unlock(reason: "Approve")
        await presence.untilAsked(1)
        while lock.unlocksWaiting < 2 { try await Task.sleep(for: .milliseconds(5)) }  // both wait on the one prompt
        presence.answer()
        try await first
        try await second
        #expect(presence.policies == [.biometricsOrPasscode])

        let third = Task<Void, any Error> { try await lock.unlock(reason: "Approve") }
        let fourth = Task<Void, any Error> { try await lock.unlock(reason: "Approve") }
        await presence.untilAsked(2)
        while lock.unlocksWaiting < 2 { try await Task.sleep(for: .milliseconds(5)) }
        presence.answer(.userCancel)
        await #expect(throws: LocalAuthenticationError.userCancel) { try await third.value }
        await #expect(throws: LocalAuthenticationError.userCancel) { try await fourth.value }
        #expect(presence.policies.count == 2)
    }

    @Test(
        "an unlock that wants biometrics only is not answered by a passcode prompt: it asks after it, never at the same time"
    )
    func otherPolicyWaits() async throws {
        let presence = HeldPresence()
        let lock = PresenceLock(policy: .always, presence: presence, clock: ManualClock())
        async let passcode: Void = lock.unlock(reason: "Open", policy: .biometricsOrPasscode)
        await presence.untilAsked(1)
        async let biometric: Void = lock.unlock(reason: "Approve", policy: .biometrics)
        while lock.unlocksWaiting < 2 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(presence.onScreen == 1, "one sheet at a time")
        presence.answer()
        try await passcode
        await presence.untilAsked(2)
        #expect(presence.policies == [.biometricsOrPasscode, .biometrics])
        presence.answer()
        try await biometric
    }
}

@Suite("The SDK guide's Face ID gate (docs/sdk.md), call by call")
struct ReadmeGateTests {
    @Test(
        "background, five minutes, foreground, active: asks; a short absence does not; an app that never calls didEnterBackground is asked every time"
    )
    func sceneSequence() async throws {
        let clock = ManualClock()
        let presence = ScriptedUserPresence()
        let gate = PresenceLock(policy: .afterBackground(300), presence: presence, clock: clock)
        // Launch: sceneDidBecomeActive asks once.
        try await gate.unlock(reason: "Unlock your bank")
        #expect(presence.prompts == 1)
        // Control Center pulled down and back (inactive, then active: no background): nothing asked.
        try await gate.unlock(reason: "Unlock your bank")
        #expect(presence.prompts == 1)
        // sceneDidEnterBackground, 60 s away, sceneWillEnterForeground, sceneDidBecomeActive: nothing asked.
        gate.didEnterBackground()
        clock.advance(60)
        gate.willEnterForeground()
        try await gate.unlock(reason: "Unlock your bank")
        #expect(presence.prompts == 1)
        // Five minutes away: asked.
        gate.didEnterBackground()
        clock.advance(300)
        gate.willEnterForeground()
        try await gate.unlock(reason: "Unlock your bank")
        #expect(presence.prompts == 2)
        // The old example's mistake: willEnterForeground without didEnterBackground. It is asked, not let through.
        gate.willEnterForeground()
        try await gate.unlock(reason: "Unlock your bank")
        #expect(presence.prompts == 3)
    }
}

@Suite("What a prompt stands for")
struct PromptMeaningTests {
    @Test("under a timeout, a check that let the passcode in does not stand for one that wants biometrics only")
    func passcodeIsNotBiometrics() async throws {
        let presence = ScriptedUserPresence()
        let lock = PresenceLock(policy: .afterTimeout(300), presence: presence, clock: ManualClock())
        try await lock.unlock(reason: "Open", policy: .biometricsOrPasscode)
        #expect(!lock.needsPresence && lock.needsPresence(for: .biometrics))
        try await lock.unlock(reason: "Approve", policy: .biometrics)
        #expect(presence.prompts == 2)
        try await lock.unlock(reason: "Approve", policy: .biometrics)
        #expect(presence.prompts == 2)
    }

    @Test("overlapping unlocks for other reasons do not share a sheet: each user sees what they approve")
    func otherReasonAsksAfter() async throws {
        let presence = HeldPresence()
        let lock = PresenceLock(policy: .always, presence: presence, clock: ManualClock())
        async let open: Void = lock.unlock(reason: "Open the app")
        await presence.untilAsked(1)
        async let approve: Void = lock.unlock(reason: "Approve EUR 10,000 to X")
        while lock.unlocksWaiting < 2 { try await Task.sleep(for: .milliseconds(5)) }
        presence.answer()
        try await open
        await presence.untilAsked(2)
        presence.answer()
        try await approve
        #expect(presence.policies.count == 2)
    }

    @Test("lock() while a prompt is up: its success does not unlock what was just locked")
    func lockDuringPrompt() async throws {
        let presence = HeldPresence()
        let lock = PresenceLock(policy: .afterTimeout(300), presence: presence, clock: ManualClock())
        async let first: Void = lock.unlock(reason: "Open")
        await presence.untilAsked(1)
        lock.lock()
        presence.answer()
        try await first
        #expect(lock.needsPresence, "signed out while the sheet was up: the next unlock asks")
    }

    @Test(
        "an unlock cancelled while it waits alone takes its prompt with it; one that others wait for stays up for them")
    func cancelled() async throws {
        let presence = HeldPresence()
        let lock = PresenceLock(policy: .always, presence: presence, clock: ManualClock())
        let alone = Task<Void, any Error> { try await lock.unlock(reason: "Approve") }
        await presence.untilAsked(1)
        alone.cancel()
        await #expect(throws: LocalAuthenticationError.appCancel) { try await alone.value }
        #expect(presence.onScreen == 0, "the sheet went with the only unlock waiting for it")

        let first = Task<Void, any Error> { try await lock.unlock(reason: "Open") }
        await presence.untilAsked(2)
        let second = Task<Void, any Error> { try await lock.unlock(reason: "Open") }
        while lock.unlocksWaiting < 2 { try await Task.sleep(for: .milliseconds(5)) }
        first.cancel()
        try await Task.sleep(for: .milliseconds(20))
        #expect(presence.onScreen == 1, "the other unlock still waits for it")
        presence.answer()
        try await second.value
        await #expect(throws: LocalAuthenticationError.appCancel, "cancelled, it never reads as passed") {
            try await first.value
        }
    }

    @Test("when every unlock sharing a prompt is cancelled, the prompt goes; a later unlock asks anew")
    func allSharersCancelled() async throws {
        let presence = HeldPresence()
        let lock = PresenceLock(policy: .always, presence: presence, clock: ManualClock())
        let first = Task<Void, any Error> { try await lock.unlock(reason: "Open") }
        await presence.untilAsked(1)
        let second = Task<Void, any Error> { try await lock.unlock(reason: "Open") }
        while lock.unlocksWaiting < 2 { try await Task.sleep(for: .milliseconds(5)) }
        first.cancel()
        second.cancel()
        await #expect(throws: LocalAuthenticationError.appCancel) { try await first.value }
        await #expect(throws: LocalAuthenticationError.appCancel) { try await second.value }
        #expect(presence.onScreen == 0, "nobody waits for the sheet any more")
        let later = Task<Void, any Error> { try await lock.unlock(reason: "Open") }
        await presence.untilAsked(2)
        presence.answer()
        try await later.value
    }

    @Test(
        "an unlock waiting behind a prompt for another reason does not keep it up when the prompt's own unlock is cancelled"
    )
    func cancelledWithOthersBehind() async throws {
        let presence = HeldPresence()
        let lock = PresenceLock(policy: .always, presence: presence, clock: ManualClock())
        let transfer = Task<Void, any Error> { try await lock.unlock(reason: "Approve the transfer") }
        await presence.untilAsked(1)
        let open = Task<Void, any Error> { try await lock.unlock(reason: "Open") }
        while lock.unlocksWaiting < 2 { try await Task.sleep(for: .milliseconds(5)) }
        transfer.cancel()
        await #expect(throws: LocalAuthenticationError.appCancel) { try await transfer.value }
        // The transfer's sheet went; the other unlock asks with its own reason.
        await presence.untilAsked(2)
        #expect(presence.onScreen == 1)
        presence.answer()
        try await open.value
    }
}
