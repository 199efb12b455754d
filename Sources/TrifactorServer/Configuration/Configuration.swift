import Core
import Foundation
import HTTP

/// Everything `trifactord serve` can be told, with the defaults a newcomer
/// gets. Each field has an environment variable and a flag (see `Setting`).
public struct Configuration: Sendable {
    /// `sqlite:PATH` or `postgres://…`.
    public var databaseURL = "sqlite:data/trifactor.db"
    /// Connections per process.
    public var databasePoolSize = 4
    /// `HOST:PORT` to listen on.
    public var listenHost = "127.0.0.1"
    public var listenPort = 8080
    /// Dev mode: the outbox is printed and served at /dev/outbox.
    public var dev = false
    /// HTTP settings (threads, worker pool, body limit).
    public var http = HTTPServerConfiguration()
    /// Argon2id cost: passes and memory in KiB.
    public var argon2OpsLimit: UInt64 = 2
    public var argon2MemoryKiB = 19 * 1024
    /// Session lifetimes.
    public var sessions = SessionPolicy()
    /// Lockout after consecutive failed sign-ins.
    public var lockout = LockoutPolicy()
    /// Sign-in attempts per client IP: burst, then a steady rate per second.
    public var signInPerIPBurst = 30.0
    public var signInPerIPRate = 0.5
    /// Sign-ups per client IP: burst, then a steady rate per second.
    public var signUpPerIPBurst = 10.0
    public var signUpPerIPRate = 0.1
    /// Verification email resends per address: burst, then a steady rate per second.
    public var resendPerEmailBurst = 3.0
    public var resendPerEmailRate = 1.0 / 300
    /// Seconds to finish requests in flight on SIGTERM.
    public var drainTimeout = 30.0

    /// The defaults.
    public init() {}
}
