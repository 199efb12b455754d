import Dispatch
import Foundation
import Testing
import TrifactorKit

/// A Keychain as the plan sees it: items that are gated or not, and the calls made. An update of a gated item
/// through the plan's no-prompt context answers errSecInteractionNotAllowed, as the real one does (unverified here).
struct SimulatedKeychain {
    typealias S = KeychainWritePlan.Status
    var items: [String: (value: Data, gated: Bool)] = [:]
    var calls: [KeychainWritePlan.Step] = []
    var failAdd: Int32?

    /// Runs a write to its end; the error when it failed.
    mutating func write(_ value: Data, key: String, protection: ItemProtection) -> SecretStoreError? {
        var plan = KeychainWritePlan(protection: protection)
        var action = plan.start()
        while case .run(let step) = action {
            action = plan.finished(step, status: perform(step, value, key, gated: plan.isGated))
        }
        if case .fail(let error) = action { return error }
        return nil
    }

    mutating func perform(_ step: KeychainWritePlan.Step, _ value: Data, _ key: String, gated: Bool) -> Int32 {
        calls.append(step)
        switch step {
        case .add:
            if let failAdd { return failAdd }
            guard items[key] == nil else { return S.duplicateItem }
            items[key] = (value, gated)
        case .updateWithoutPrompt:
            guard let item = items[key] else { return S.itemNotFound }
            guard !item.gated else { return S.interactionNotAllowed }
            items[key] = (value, false)
        case .delete:
            guard items.removeValue(forKey: key) != nil else { return S.itemNotFound }
        case .addMarker:
            guard items["\(key).gated"] == nil else { return S.duplicateItem }
            items["\(key).gated"] = (Data([1]), false)
        case .removeMarker:
            guard items.removeValue(forKey: "\(key).gated") != nil else { return S.itemNotFound }
        }
        return S.success
    }
}

@Suite("Keychain writes: which SecItem calls, in which order, decided in the core")
struct KeychainWritePlanTests {
    @Test(
        "replacing a gated item deletes and adds it: never SecItemUpdate, which would prompt with no reason",
        arguments: [
            ItemProtection.userPresence, .biometryCurrentSet,
        ])
    func gatedReplace(protection: ItemProtection) {
        var keychain = SimulatedKeychain()
        #expect(keychain.write(Data([1]), key: "k", protection: protection) == nil)
        #expect(keychain.write(Data([2]), key: "k", protection: protection) == nil)
        #expect(!keychain.calls.contains(.updateWithoutPrompt))
        #expect(keychain.calls == [.delete, .add, .addMarker, .delete, .add, .addMarker])
        #expect(
            keychain.items["k"]?.value == Data([2]) && keychain.items["k"]?.gated == true
                && keychain.items["k.gated"] != nil)
    }

    @Test("an ungated item is added, then updated in place: a failed write keeps the old value")
    func ungatedUpdate() {
        var keychain = SimulatedKeychain()
        #expect(keychain.write(Data([1]), key: "t", protection: .afterFirstUnlockThisDeviceOnly) == nil)
        #expect(keychain.write(Data([2]), key: "t", protection: .afterFirstUnlockThisDeviceOnly) == nil)
        #expect(keychain.calls == [.add, .removeMarker, .add, .updateWithoutPrompt, .removeMarker])
        #expect(keychain.items["t"]?.value == Data([2]))
        keychain.failAdd = -34018  // errSecMissingEntitlement
        #expect(
            keychain.write(Data([3]), key: "new", protection: .afterFirstUnlockThisDeviceOnly)
                == .unexpected(status: -34018))
        #expect(keychain.items["t"]?.value == Data([2]))
    }

    @Test("an ungated write over a gated item replaces it instead of prompting, and drops the marker")
    func ungatedOverGated() {
        var keychain = SimulatedKeychain()
        _ = keychain.write(Data([1]), key: "k", protection: .userPresence)
        keychain.calls = []
        #expect(keychain.write(Data([2]), key: "k", protection: .afterFirstUnlockThisDeviceOnly) == nil)
        #expect(keychain.calls == [.add, .updateWithoutPrompt, .delete, .add, .removeMarker])
        #expect(keychain.items["k"]?.gated == false && keychain.items["k.gated"] == nil)
    }

    @Test("every write ends: an item that keeps coming back fails with its status instead of looping")
    func terminates() {
        var plan = KeychainWritePlan(protection: .afterFirstUnlockThisDeviceOnly)
        var action = plan.start()
        var steps = 0
        while case .run(let step) = action, steps < 20 {
            steps += 1
            action = plan.finished(step, status: step == .add ? -25299 : step == .updateWithoutPrompt ? -25300 : 0)
        }
        #expect(action == .fail(.unexpected(status: -25299)) && steps == 3)
        var gated = KeychainWritePlan(protection: .biometryCurrentSet)
        #expect(gated.start() == .run(.delete))
        #expect(gated.finished(.delete, status: 0) == .run(.add))
        #expect(gated.finished(.add, status: -25299) == .fail(.unexpected(status: -25299)))
    }

    @Test("statuses about presence stay presence failures; others keep their status")
    func statuses() {
        var plan = KeychainWritePlan(protection: .userPresence)
        _ = plan.start()
        #expect(plan.finished(.delete, status: -25308) == .fail(.presence(.interactionNotAllowed)))
        #expect(KeychainWritePlan.error(status: -128) == .presence(.userCancel))
        #expect(KeychainWritePlan.error(status: -25300) == .unexpected(status: -25300))
    }
}

@Suite("Before a gated item is added: a passcode and, for biometry-bound items, enrolled biometry")
struct KeychainPreflightTests {
    static func readiness(passcode: LocalAuthenticationError? = nil, biometrics: LocalAuthenticationError? = nil) -> (
        PresencePolicy
    ) -> PresenceReadiness {
        { PresenceReadiness(biometry: .faceID, blocker: $0 == .biometrics ? biometrics : passcode) }
    }

    @Test("no device passcode: both gated classes fail with 'set a passcode', before the Keychain is touched")
    func noPasscode() {
        let r = Self.readiness(passcode: .passcodeNotSet, biometrics: .passcodeNotSet)
        #expect(KeychainWritePlan.blocker(for: .userPresence, readiness: r) == .presence(.passcodeNotSet))
        #expect(KeychainWritePlan.blocker(for: .biometryCurrentSet, readiness: r) == .presence(.passcodeNotSet))
    }

    @Test("biometry not enrolled or turned off blocks only biometry-bound items; a lockout blocks nothing")
    func biometry() {
        #expect(
            KeychainWritePlan.blocker(
                for: .biometryCurrentSet, readiness: Self.readiness(biometrics: .biometryNotEnrolled))
                == .presence(.biometryNotEnrolled))
        #expect(
            KeychainWritePlan.blocker(
                for: .biometryCurrentSet, readiness: Self.readiness(biometrics: .biometryNotAvailable))
                == .presence(.biometryNotAvailable))
        #expect(
            KeychainWritePlan.blocker(for: .userPresence, readiness: Self.readiness(biometrics: .biometryNotEnrolled))
                == nil)
        #expect(
            KeychainWritePlan.blocker(for: .biometryCurrentSet, readiness: Self.readiness(biometrics: .biometryLockout))
                == nil)
    }

    @Test("session tokens need no check: nothing is asked")
    func ungated() {
        let asked = Watched(0)
        let blocker = KeychainWritePlan.blocker(for: .afterFirstUnlockThisDeviceOnly) { policy in
            asked.withLock { $0 += 1 }
            return PresenceReadiness(biometry: .none, blocker: .passcodeNotSet)
        }
        #expect(blocker == nil && asked.value == 0)
        #expect(KeychainWritePlan.presenceChecks(for: .biometryCurrentSet) == [.biometricsOrPasscode, .biometrics])
    }
}

@Suite("Blocking calls run on their own queue, never on the cooperative pool")
struct BlockingCallQueueTests {
    @Test("the body runs on the queue and its result comes back")
    func runsOnQueue() async {
        let queue = BlockingCallQueue(label: "test.keychain")
        #expect(!queue.isCurrent)
        #expect(await queue.run { queue.isCurrent })
        #expect(await queue.run { 41 + 1 } == 42)
    }

    @Test("calls blocked behind a sheet leave the pool free: a task can still run and release them")
    func poolStaysFree() async {
        let queue = BlockingCallQueue(label: "test.blocked")
        let sheet = DispatchSemaphore(value: 0)
        let blocked = ProcessInfo.processInfo.activeProcessorCount + 2  // more than the pool has threads
        let released = await withTaskGroup(of: Bool.self) { group in
            // Each call waits for the "sheet" to close, at most 60 s (so a regression fails instead of hanging; on a
            // machine busy with a whole test run, 5 s was not always enough for the releasing task to be scheduled).
            for _ in 0..<blocked { group.addTask { await queue.run { sheet.wait(timeout: .now() + 60) == .success } } }
            group.addTask {
                // Runs on the pool while the calls wait: had they blocked pool threads, it could not run before they timed out.
                try? await Task.sleep(nanoseconds: 20_000_000)
                for _ in 0..<blocked { sheet.signal() }
                return true
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(released == blocked + 1)
    }
}

@Suite("After a reinstall the Keychain is cleared; before the first unlock nothing is decided")
struct ReinstallGuardTests {
    final class MemoryFlags: InstallFlagStore, @unchecked Sendable {
        // @unchecked Sendable: every access holds `lock`.
        private let lock = NSLock()
        private var keys: Set<String> = []
        func isSet(_ key: String) -> Bool { lock.withLock { keys.contains(key) } }
        func set(_ key: String) { _ = lock.withLock { keys.insert(key) } }
    }

    struct ClearFailed: Error {}

    @Test("first launch after install: the old Keychain items go, once; later launches keep them")
    func clearsOnce() async throws {
        let store = MemorySecretStore()
        let flags = MemoryFlags()
        let cleared = Watched(0)
        try await store.set(Data([1]), for: "session", protection: .afterFirstUnlockThisDeviceOnly)
        let launch = ReinstallGuard(flags: flags)
        let clear: () async throws -> Void = {
            cleared.withLock { $0 += 1 }
            try await store.remove("session")
        }
        #expect(try await launch.clearIfReinstalled(protectedDataAvailable: true, clear: clear) == .clear)
        #expect(try await !store.contains("session"))
        try await store.set(Data([2]), for: "session", protection: .afterFirstUnlockThisDeviceOnly)
        #expect(try await launch.clearIfReinstalled(protectedDataAvailable: true, clear: clear) == .keep)
        #expect(try await store.contains("session") && cleared.value == 1)
    }

    @Test("launched before the first unlock (defaults read empty): waits, clears nothing, sets nothing")
    func beforeFirstUnlock() async throws {
        let flags = MemoryFlags()
        let cleared = Watched(false)
        let decision = await ReinstallGuard(flags: flags).clearIfReinstalled(protectedDataAvailable: false) {
            cleared.set(true)
        }
        #expect(decision == .wait && !cleared.value && !flags.isSet("trifactor.installed"))
        #expect(ReinstallGuard.decide(flagSet: true, protectedDataAvailable: false) == .keep)
    }

    @Test("a clear that failed leaves the flag unset, so the next launch tries again")
    func failedClearRetries() async throws {
        let flags = MemoryFlags()
        let launch = ReinstallGuard(flags: flags, key: "installed")
        await #expect(throws: ClearFailed.self) {
            try await launch.clearIfReinstalled(protectedDataAvailable: true) { throw ClearFailed() }
        }
        #expect(!flags.isSet("installed"))
        #expect(await launch.clearIfReinstalled(protectedDataAvailable: true) {} == .clear)
        #expect(flags.isSet("installed"))
    }

    @Test("the UserDefaults flag store reads back what it set")
    func userDefaults() {
        let suite = "trifactor.tests.\(UUID().uuidString)"
        defer { UserDefaults(suiteName: suite)?.removePersistentDomain(forName: suite) }
        let flags = UserDefaultsInstallFlag(suiteName: suite)
        #expect(!flags.isSet("installed"))
        flags.set("installed")
        #expect(flags.isSet("installed"))
    }
}
