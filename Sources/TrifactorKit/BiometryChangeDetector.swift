public import Foundation

/// The enrolled biometrics' state as LocalAuthentication reports it: an opaque hash that changes when a finger
/// or face is added or removed, and says nothing else. Which API produced it is kept with it, because the two
/// (`evaluatedPolicyDomainState` before iOS 18, `domainState.biometry.stateHash` from iOS 18) are not documented
/// to agree, and a hash from one compared with one from the other proves nothing.
public struct BiometryDomainState: Sendable, Equatable, Codable {
    /// The API that produced the hash.
    public enum Source: String, Sendable, Equatable, Codable {
        /// `LAContext.evaluatedPolicyDomainState` (deprecated in iOS 18).
        case evaluatedPolicyDomainState
        /// `LAContext.domainState.biometry.stateHash` (iOS 18, macOS 15).
        case biometryStateHash
    }

    public let source: Source
    public let hash: Data

    public init(source: Source, hash: Data) {
        self.source = source
        self.hash = hash
    }
}

/// Reads the current biometric state without prompting (the Apple adapter: `LocalAuthenticationPresence`).
public protocol BiometryStateReading: Sendable {
    /// The state now, or nil when it cannot be read (no biometry enrolled, turned off for the app, locked out).
    func biometryDomainState() -> BiometryDomainState?
}

/// What a comparison with the state recorded at enrolment found.
public enum BiometryChange: Sendable, Equatable {
    /// The same fingers or faces as at enrolment.
    case unchanged
    /// A finger or face was added or removed since enrolment: whoever added it can pass every biometric check, so
    /// an app should say "Your Face ID changed" and ask for the password (and set the device up again).
    case changed
    /// Nothing was recorded (enrolled before this check existed, or when the state could not be read).
    case notRecorded
    /// The state cannot be read now (locked out, no biometry enrolled, turned off): ask again later; never "unchanged".
    case unreadable
    /// Recorded by the other API (the OS was updated across iOS 18): no conclusion. Apple also warns that the hash
    /// may change across major OS versions with no biometric change, so after an update `.changed` may be false alarm;
    /// an app that re-records after its next full sign-in stays correct either way.
    case cannotCompare
}

/// Remembers the biometric state at enrolment, in the secret store under `key`, and tells later whether it
/// changed. The Keychain's `.biometryCurrentSet` items and keys vanish on such a change by themselves; this
/// covers what the app protects another way (a `.userPresence` item, a server-side factor, a local PIN).
public struct BiometryChangeDetector: Sendable {
    public let store: any SecretStore
    public let key: String

    public init(store: any SecretStore, key: String = "trifactor.biometry-state") {
        self.store = store
        self.key = key
    }

    /// Records `state` as the enrolment's (call right after a successful enrolment). A nil state removes the old
    /// record instead, so a record from an earlier enrolment never judges this one.
    /// - Returns: whether a state was recorded.
    /// - Throws: the store's error.
    @discardableResult
    public func record(_ state: BiometryDomainState?) async throws(SecretStoreError) -> Bool {
        guard let state else {
            try await store.remove(key)
            return false
        }
        let data: Data
        do { data = try JSONEncoder().encode(state) } catch {
            throw .damaged("the biometric state could not be written")
        }
        try await store.set(data, for: key, protection: .afterFirstUnlockThisDeviceOnly)
        return true
    }

    /// Compares `current` with the recorded state.
    /// - Throws: the store's error; `.damaged` when the record is unreadable (it never reads as "unchanged").
    public func check(_ current: BiometryDomainState?) async throws(SecretStoreError) -> BiometryChange {
        guard let data = try await store.get(key, prompt: nil) else { return .notRecorded }
        guard let recorded = try? JSONDecoder().decode(BiometryDomainState.self, from: data) else {
            throw .damaged("the recorded biometric state is unreadable")
        }
        return Self.compare(recorded: recorded, current: current)
    }

    /// Forgets the record (sign-out, device removed).
    public func forget() async throws(SecretStoreError) { try await store.remove(key) }

    /// The comparison itself.
    public static func compare(recorded: BiometryDomainState?, current: BiometryDomainState?) -> BiometryChange {
        guard let recorded else { return .notRecorded }
        guard let current else { return .unreadable }
        guard recorded.source == current.source else { return .cannotCompare }
        return recorded.hash == current.hash ? .unchanged : .changed
    }
}
