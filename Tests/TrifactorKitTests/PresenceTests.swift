import Foundation
import Testing
import TrifactorKit
import TrifactorKitTesting

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
        let clock = ManualClock(), presence = ScriptedUserPresence()
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
        let clock = ManualClock(), presence = ScriptedUserPresence()
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

    @Test("LAError codes map to one case each", arguments: [
        (-1, LocalAuthenticationError.failed), (-2, .userCancel), (-3, .userFallback), (-4, .systemCancel), (-5, .passcodeNotSet),
        (-6, .biometryNotAvailable), (-7, .biometryNotEnrolled), (-8, .biometryLockout), (-9, .appCancel), (-10, .appCancel),
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
        #expect(LocalAuthenticationError(osStatus: -25300) == nil)  // errSecItemNotFound: missing, not a presence failure
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
