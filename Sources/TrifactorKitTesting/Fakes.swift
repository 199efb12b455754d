public import Foundation
public import TrifactorKit

/// A clock a test moves by hand.
public final class ManualClock: TrifactorClock, @unchecked Sendable {
    // @unchecked Sendable: every access holds `lock`.
    private let lock = NSLock()
    private var current: Date

    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = start }

    public var now: Date {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    /// Moves the clock forward.
    public func advance(_ seconds: TimeInterval) {
        lock.lock()
        current += seconds
        lock.unlock()
    }
}

/// A presence check that answers from a script and counts its prompts: each
/// `verify` takes the next outcome (passing once the script is empty).
public final class ScriptedUserPresence: UserPresence, @unchecked Sendable {
    // @unchecked Sendable: every access holds `lock`.
    private let lock = NSLock()
    private var script: [LocalAuthenticationError?]
    private var asked: [(reason: String, policy: PresencePolicy)] = []
    public let availableBiometry: Biometry

    /// - Parameter script: outcomes in order; nil passes.
    public init(biometry: Biometry = .faceID, script: [LocalAuthenticationError?] = []) {
        availableBiometry = biometry
        self.script = script
    }

    /// How many prompts were shown.
    public var prompts: Int {
        lock.lock()
        defer { lock.unlock() }
        return asked.count
    }

    /// The reasons shown, in order.
    public var reasons: [String] {
        lock.lock()
        defer { lock.unlock() }
        return asked.map(\.reason)
    }

    /// Adds outcomes to the script.
    public func enqueue(_ outcomes: LocalAuthenticationError?...) {
        lock.lock()
        script += outcomes
        lock.unlock()
    }

    public func verify(reason: String, policy: PresencePolicy) async throws(LocalAuthenticationError) {
        let outcome = lock.withLock {
            asked.append((reason, policy))
            return script.isEmpty ? nil : script.removeFirst()
        }
        if let outcome { throw outcome }
    }
}

/// A transport that records each request before passing it on (to check
/// what an SDK call sent), or answers from `respond` when given.
public final class RecordingTransport: HTTPTransport, @unchecked Sendable {
    // @unchecked Sendable: `log` is only touched under `lock`; `next` and `respond` are immutable.
    private let lock = NSLock()
    private var log: [HTTPRequest] = []
    private let next: (any HTTPTransport)?
    private let respond: (@Sendable (HTTPRequest) throws -> HTTPResponse)?

    /// Records, then sends through `next`.
    public init(passingTo next: any HTTPTransport) {
        self.next = next
        respond = nil
    }

    /// Records, then answers with `respond` (a canned server).
    public init(respond: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse) {
        next = nil
        self.respond = respond
    }

    /// The requests sent so far.
    public var requests: [HTTPRequest] {
        lock.lock()
        defer { lock.unlock() }
        return log
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        lock.withLock { log.append(request) }
        if let respond { return try respond(request) }
        return try await next!.send(request)
    }
}

/// A passkey authenticator that answers from canned credentials, or fails
/// as told, and records the options it was given.
public final class ScriptedPasskeyAuthenticator: PasskeyAuthenticator, @unchecked Sendable {
    // @unchecked Sendable: every access holds `lock`.
    private let lock = NSLock()
    private var created: [CreationOptions] = []
    private var requested: [RequestOptions] = []
    private let credential: @Sendable (_ challenge: String) throws -> CredentialJSON

    /// - Parameter credential: the credential for a challenge (throw to simulate a cancelled sheet).
    public init(credential: @escaping @Sendable (_ challenge: String) throws -> CredentialJSON) {
        self.credential = credential
    }

    /// The creation options seen, oldest first.
    public var creations: [CreationOptions] { lock.withLock { created } }
    /// The request options seen, oldest first.
    public var requests: [RequestOptions] { lock.withLock { requested } }

    public func create(_ options: CreationOptions) async throws -> CredentialJSON {
        lock.withLock { created.append(options) }
        return try credential(options.challenge)
    }

    public func get(_ options: RequestOptions) async throws -> CredentialJSON {
        lock.withLock { requested.append(options) }
        return try credential(options.challenge)
    }
}

/// A device key store that passes every call to `wrapped` (a real store,
/// or a test's own) after checking a script of failures, and records the
/// reasons shown: to test an app's handling of a cancelled or invalidated
/// key without a Secure Enclave.
public final class ScriptedDeviceKeyStore: DeviceKeyStore, @unchecked Sendable {
    // @unchecked Sendable: `script` and `shown` are only touched under `lock`.
    private let lock = NSLock()
    private let wrapped: any DeviceKeyStore
    private var script: [SecretStoreError?]
    private var shown: [String] = []

    /// - Parameter script: outcomes of the next `sign` calls in order (nil passes through).
    public init(wrapping wrapped: any DeviceKeyStore, script: [SecretStoreError?] = []) {
        self.wrapped = wrapped
        self.script = script
    }

    /// The reasons `sign` was given, oldest first.
    public var reasons: [String] { lock.withLock { shown } }

    public func createKey(tag: String, releasedBy: PresencePolicy?) async throws(SecretStoreError) -> Data {
        try await wrapped.createKey(tag: tag, releasedBy: releasedBy)
    }

    public func gate(for policy: PresencePolicy) -> ApprovalGate { wrapped.gate(for: policy) }

    public func publicKey(tag: String) async throws(SecretStoreError) -> Data? { try await wrapped.publicKey(tag: tag) }

    public func sign(_ message: Data, tag: String, reason: String) async throws(SecretStoreError) -> Data {
        let outcome: SecretStoreError? = lock.withLock {
            shown.append(reason)
            return script.isEmpty ? nil : script.removeFirst()
        }
        if let outcome { throw outcome }
        return try await wrapped.sign(message, tag: tag, reason: reason)
    }

    public func deleteKey(tag: String) async throws(SecretStoreError) { try await wrapped.deleteKey(tag: tag) }
}

/// A secret store in memory whose reads can be scripted to fail as a real
/// gated item does (a cancelled prompt, biometrics changed), and which
/// records the prompts it was asked to show.
public final class ScriptedSecretStore: SecretStore, @unchecked Sendable {
    // @unchecked Sendable: `items`, `script` and `shown` are only touched under `lock`.
    private let lock = NSLock()
    private var items: [String: (value: Data, protection: ItemProtection)] = [:]
    private var script: [SecretStoreError?] = []
    private var shown: [String?] = []

    public init() {}

    /// Outcomes of the next reads of protected items, in order (nil passes).
    public func enqueue(_ outcomes: SecretStoreError?...) { lock.withLock { script += outcomes } }
    /// The prompts reads were given, oldest first.
    public var prompts: [String?] { lock.withLock { shown } }
    /// The protection `key` was stored with.
    public func protection(of key: String) -> ItemProtection? { lock.withLock { items[key]?.protection } }

    public func set(_ value: Data, for key: String, protection: ItemProtection) async throws(SecretStoreError) {
        lock.withLock { items[key] = (value, protection) }
    }

    public func get(_ key: String, prompt: String?) async throws(SecretStoreError) -> Data? {
        let (item, outcome): ((value: Data, protection: ItemProtection)?, SecretStoreError?) = lock.withLock {
            let item = items[key]
            guard let item, item.protection != .afterFirstUnlockThisDeviceOnly else { return (item, nil) }
            shown.append(prompt)
            return (item, script.isEmpty ? nil : script.removeFirst())
        }
        if let outcome { throw outcome }
        return item?.value
    }

    public func contains(_ key: String) async throws(SecretStoreError) -> Bool { lock.withLock { items[key] != nil } }

    public func remove(_ key: String) async throws(SecretStoreError) { lock.withLock { items[key] = nil } }
}
