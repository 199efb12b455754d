import Core
import Foundation
import Messaging
import HTTP

/// Everything `trifactord serve` can be told, with the defaults a newcomer
/// gets. Each field has an environment variable and a flag (see `Setting`).
public struct Configuration: Sendable {
    /// `sqlite:PATH` or `postgres://…`.
    public var databaseURL = "sqlite:data/trifactor.db"
    /// Connections per process.
    public var databasePoolSize = 4
    /// Dev mode: the outbox is printed and served at /dev/outbox.
    public var dev = false
    /// Email over SMTP (`TRIFACTOR_SMTP_URL`); nil: emails wait in the outbox (dev mode shows them).
    public var smtp: SMTPSender.Settings?
    /// SMS and voice provider accounts in failover order (`TRIFACTOR_SMS_PROVIDER`).
    public var providers: [ProviderAccount] = []
    /// This server's public address, for providers' delivery receipts (nil: none asked for).
    public var publicURL: URL?
    /// The language of messages whose locale and recipient name none of the catalog's.
    public var messageLanguage = "en"
    /// Tries per message (1, then after 2, 4, 8… seconds, at most a minute apart) before it is failed and audited.
    public var deliveryAttempts = 5
    /// The most SMS segments a text may take before its optional sentences are dropped (never the code).
    public var smsMaxSegments = 1
    /// The bearer token `GET /metrics` asks for (`TRIFACTOR_METRICS_TOKEN_FILE`); nil: `/metrics` answers 404.
    public var metricsToken: String?
    /// HTTP settings: where to listen (127.0.0.1:8080), threads, worker pool, body limit, TLS.
    public var http = HTTPServerConfiguration()
    /// Argon2id cost: passes and memory in KiB.
    public var argon2OpsLimit: UInt64 = 2
    public var argon2MemoryKiB = 19 * 1024
    /// Session lifetimes at AAL1 (password only) and AAL2 (a second factor).
    public var sessions = SessionPolicy()
    public var sessionsAAL2 = SessionPolicy(idleTimeout: 3600, absoluteLifetime: 24 * 3600)
    /// cracklib's packed dictionary (without its `.pwd` suffix) that new passwords are checked against.
    public var passwordDictionary = PasswordDictionary.defaultPath
    /// Live sessions per user; a sign-in beyond it ends the oldest.
    public var maxSessionsPerUser = 50
    /// How recent a password or second-factor proof must be to enroll a factor
    /// or create recovery codes, and a second-factor proof to remove a factor.
    public var reauthenticationWindow: TimeInterval = 300
    /// Which device enrollments must bring an approval key, and which gates it may have.
    public var deviceApprovalKeys = DeviceApprovalKeys.optional
    /// AES-256 key for secrets at rest (TOTP seeds): 32 bytes, base64, in a file.
    /// Dev mode creates it when missing.
    public var keyFile = "data/trifactor.key"
    /// Seconds the active key must have been sealing (so every instance has read it) before unused older keys are retired.
    public var keyRetireAfter: TimeInterval = 60
    /// WebAuthn relying party: id (a registrable domain), name, and the
    /// origins allowed exactly; dev mode also allows http://localhost:<any port>.
    public var rpID = "localhost"
    public var rpName = "Trifactor"
    public var origins: Set<String> = []
    /// The issuer shown in authenticator apps.
    public var totpIssuer = "Trifactor"
    /// The account-wide ceiling on second-factor proofs, across every flow:
    /// consecutive wrong proofs lock for a growing delay after 10, and for
    /// good (until an administrator resets the factors) at 100; only a
    /// success clears the count. Each flow also has its own budget
    /// (`SecondFactorService.attemptsPerPurpose`).
    public var mfaLockout = LockoutPolicy(freeAttempts: 10, baseDelay: 5, maximumDelay: 900, ceiling: 100)
    /// Lockout after consecutive failed sign-ins.
    public var lockout = LockoutPolicy()
    /// Sign-in attempts per client IP: burst, then a steady rate per second.
    public var signInPerIPBurst = 30.0
    public var signInPerIPRate = 0.5
    /// The sign-in bucket per client IP.
    var signInPerIP: RateLimiter.Limit { .init(burst: signInPerIPBurst, rate: signInPerIPRate) }
    /// Sign-ups per client IP: burst, then a steady rate per second.
    public var signUpPerIPBurst = 10.0
    public var signUpPerIPRate = 0.1
    /// Verification email resends per address: burst, then a steady rate per second.
    public var resendPerEmailBurst = 3.0
    public var resendPerEmailRate = 1.0 / 300
    /// Phone verification limits and test numbers.
    public var verify = VerifySettings()
    /// Seconds added to this instance's clock: a fault drill of clock skew between instances (0 in production).
    public var clockOffset: TimeInterval = 0
    /// Seconds to finish requests in flight on SIGTERM.
    public var drainTimeout = 30.0

    /// The defaults.
    public init() {}
}

/// Limits of the phone verification API (token buckets: a burst, then a rate
/// per second), and the test numbers that never send anything.
public struct VerifySettings: Sendable {
    public var perNumberBurst = 5.0
    public var perNumberRate = 5.0 / 600
    public var perKeyBurst = 100.0
    public var perKeyRate = 10.0
    public var perIPBurst = 30.0
    public var perIPRate = 0.5
    public var perCountryBurst = 200.0
    public var perCountryRate = 2.0
    /// Wrong codes a number may collect in a day, across requests, before
    /// new requests for it are refused.
    public var maxFailuresPerNumber = 10
    /// Number (E.164 digits) → fixed code: no message is sent for these.
    public var testNumbers: [String: String] = [:]
    /// Only these country calling codes receive codes (nil: all but the denied).
    public var allowedCountries: Set<Int>?
    /// Country calling codes that never receive codes.
    public var deniedCountries: Set<Int> = []
    /// Verifications allowed per hour and per day.
    public struct Budget: Sendable, Equatable {
        public var perHour: Double
        public var perDay: Double
        public init(perHour: Double, perDay: Double) {
            self.perHour = perHour
            self.perDay = perDay
        }
    }
    /// SMS-pumping budgets: a number prefix (country code and 6 national digits), a country, everything.
    public struct Budgets: Sendable, Equatable {
        public var prefix = Budget(perHour: 20, perDay: 100)
        public var country = Budget(perHour: 1_000, perDay: 10_000)
        public var total = Budget(perHour: 5_000, perDay: 50_000)
    }
    public var budgets = Budgets()
    /// The conversion guard: over `windowHours`, a country with at least `minimumVolume` verifications
    /// started of which fewer than `minimumRate` were completed gets no new ones until that recovers.
    public struct ConversionGuard: Sendable, Equatable {
        public var minimumRate = 0.2
        public var minimumVolume = 200
        /// Refuse new codes to such a country (429), or accept them and hold their messages for review.
        public var holdForReview = false
        public var windowHours = 24
    }
    public var conversion = ConversionGuard()
    public init() {}
}

/// What a new device enrollment must bring (`TRIFACTOR_DEVICE_APPROVAL_KEY`).
/// Factors enrolled before a stricter setting keep working and are listed as they are.
public enum DeviceApprovalKeys: String, Sendable, CaseIterable {
    /// An approval key with any gate, or none (an SDK that makes none; listed as not approval-bound).
    case optional
    /// An approval key, released by biometrics, the device passcode or a passphrase.
    case required
    /// An approval key released by biometrics as enrolled now: the passcode variant is refused.
    case biometric
}
