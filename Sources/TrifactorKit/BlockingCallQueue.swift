import Dispatch

/// Runs blocking platform calls on a dedicated serial queue and awaits them, so they never run on Swift's
/// cooperative pool. `SecItemCopyMatching` on a gated item blocks its thread while the Face ID sheet is up, for
/// seconds; the pool has as many threads as cores, so two such calls would stall every task of the app.
/// Serial on purpose: the system shows one presence sheet at a time, and Keychain writes made in order stay in order.
/// `@unchecked Sendable`: both properties are set once in `init`, and a dispatch queue and its specific key are
/// made to be used from any thread (the Linux overlay marks them `Sendable`; Apple's SDKs may not mark the key).
public final class BlockingCallQueue: @unchecked Sendable {
    private let queue: DispatchQueue
    private let key = DispatchSpecificKey<ObjectIdentifier>()

    /// A queue of its own, labelled for debuggers and crash logs.
    public init(label: String) {
        queue = DispatchQueue(label: label, qos: .userInitiated)
        queue.setSpecific(key: key, value: ObjectIdentifier(self))
    }

    /// The queue every Keychain store shares, so their calls (and sheets) come one at a time.
    public static let keychain = BlockingCallQueue(label: "TrifactorKit.keychain")

    /// Runs `body` on the queue and returns its result. `body` cannot be cancelled once it runs (neither can
    /// `SecItem` calls); a cancelled task still waits for it.
    public func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: body()) }
        }
    }

    /// Runs `body` on a thread of Dispatch's global pool and awaits it, for a blocking call that must wait behind no
    /// other: a Secure Enclave signature behind a Face ID sheet must not hold up the key that signs polls, nor the
    /// Keychain's queue, while the user takes their time.
    public static func detached<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async { continuation.resume(returning: body()) }
        }
    }

    /// Whether the caller is running on this queue (for tests and preconditions).
    public var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == ObjectIdentifier(self) }
}
