import Core
import Crypto
import Foundation
import Logging
import HTTP
import Messaging
import Store

/// The dependencies every feature receives: storage, time, randomness,
/// hashing, policies and the log. Built once at start-up.
public struct Environment: Sendable {
    public let database: any Database
    public let clock: Clock
    public let random: RandomSource
    public let hasher: PasswordHasher
    public let passwordPolicy: PasswordPolicy
    public let configuration: Configuration
    public let logger: Logger
    /// Where the outbox delivers; nil when no provider is configured (then
    /// phone verification answers 503 rather than accept what cannot be sent).
    public let sender: (any MessageSender)?
    /// Wakes long-polling requests (a device waiting for approvals, a browser waiting for one).
    public let hub = LongPollHub()
    /// Live sessions in memory, for the session check on the HTTP thread.
    let sessionCache = SessionCache()
    /// Publishes changes to this process's long polls and session cache, and to the other instances.
    var changes: ChangeFeed { ChangeFeed.live(local: local, database: database, logger: logger) }
    /// Where this process hears of a change (its own or another instance's).
    var local: @Sendable (String) -> Void {
        { [hub, sessionCache] key in
            hub.notify(key)
            sessionCache.invalidate(key)
        }
    }
    /// A hash to verify against when an email is unknown, so that costs the
    /// same Argon2id work as a wrong password.
    let decoyHash: String
    /// Seals secrets at rest under the key file's key; nil when there is no
    /// key file (then TOTP enrollment answers 503).
    let secretBox: SealedBox?

    /// Dependencies from parts (tests pass their own clock or logger).
    public init(database: any Database, configuration: Configuration, clock: Clock = .system,
                random: RandomSource = SecureRandom.source, logger: Logger = .standardError, sender: (any MessageSender)? = nil) throws {
        self.sender = sender
        self.database = database
        self.configuration = configuration
        self.clock = clock
        self.random = random
        self.logger = logger
        hasher = try PasswordHasher(opsLimit: configuration.argon2OpsLimit, memLimit: configuration.argon2MemoryKiB * 1024)
        passwordPolicy = PasswordPolicy(blocklist: CommonPasswords.load())
        decoyHash = hasher.decoyHash()
        secretBox = try KeyFile.load(configuration, logger: logger)
    }

    /// The lifetimes of a session at assurance level `aal`.
    func sessionPolicy(aal: Int) -> SessionPolicy {
        aal >= 2 ? configuration.sessionsAAL2 : configuration.sessions
    }

    /// The current time in milliseconds since 1970, as stored.
    var nowMillis: Int64 { Int64((clock.now().timeIntervalSince1970 * 1000).rounded()) }

    /// Runs `body` in one database transaction; a database that cannot be
    /// reached or stays busy becomes a 503 problem, without internals.
    func transaction<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try unavailableAs503 { try database.transaction(body) }
    }

    /// Runs `body` in one read-only transaction (never the write lock);
    /// database failures become a 503 as in `transaction`.
    func read<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try unavailableAs503 { try database.read(body) }
    }

    private func unavailableAs503<T>(_ run: () throws -> T) throws -> T {
        do {
            return try run()
        } catch let error as StoreError where error.kind == .unavailable || error.kind == .busy {
            logger.log("error", "database_unavailable", ["error": .string(error.debugDescription)])
            throw APIError.serviceUnavailable
        }
    }

    /// Records `event` now, in a transaction of its own (for outcomes whose
    /// request changes nothing else, such as a refusal).
    func audit(_ event: AuditEvent) throws {
        try transaction { try AuditLog.append(event, at: nowMillis, on: $0) }
    }

    /// A new random identifier (128 bits, UUID text form).
    func newID() -> String {
        var b = random.bytes(16)
        b[6] = (b[6] & 0x0f) | 0x40
        b[8] = (b[8] & 0x3f) | 0x80
        let h = Hex.encode(b)
        let c = Array(h)
        return String(c[0..<8]) + "-" + String(c[8..<12]) + "-" + String(c[12..<16]) + "-" + String(c[16..<20]) + "-" + String(c[20..<32])
    }
}

/// The common-password blocklist shipped with Trifactor.
enum CommonPasswords {
    /// The list's entries (Openwall's public-domain list, as Debian ships it).
    static func load() -> [String] {
        guard let url = Bundle.module.url(forResource: "common-passwords", withExtension: "txt"),
              let text = try? String(contentsOf: url, encoding: .utf8)
        else { return [] }
        return text.split(whereSeparator: \.isNewline).map(String.init)
    }
}

extension Date {
    /// Milliseconds since 1970, as stored.
    var millis: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }
    /// A date from stored milliseconds.
    init(millis: Int64) { self.init(timeIntervalSince1970: Double(millis) / 1000) }
}
