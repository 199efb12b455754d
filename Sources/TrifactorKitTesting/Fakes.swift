import Foundation
import TrifactorKit

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
