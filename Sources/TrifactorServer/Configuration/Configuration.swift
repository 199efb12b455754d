package import Core
package import Foundation
package import HTTP
package import Messaging

/// Everything `trifactord serve` can be told, with the defaults a newcomer
/// gets. Each field has an environment variable and a flag (see `Setting`).
package struct Configuration: Sendable {
    /// `sqlite:PATH` or `postgres://…`.
    package var databaseURL = "sqlite:data/trifactor.db"
    /// Sentences about settings given by a former name (`Setting.renamed`).
    package var deprecations: [String] = []
    /// The OpenID Provider takes only pushed authorization requests (`TRIFACTOR_OIDC_REQUIRE_PAR`).
    package var requirePushedRequests = false
    /// DPoP proofs must carry the server's nonce (`TRIFACTOR_OIDC_DPOP_NONCE`, RFC 9449 §8).
    package var dpopNonces = false
    /// Every client is held to the FAPI 2.0 Security Profile (`TRIFACTOR_OIDC_FAPI2`).
    package var fapi2 = false
    /// The operator's authorization details types and their schemas (`TRIFACTOR_OIDC_AUTHORIZATION_DETAILS_TYPES`).
    var detailsSchemas: [String: DetailsSchema] = [:]
    /// Connections per process.
    package var databasePoolSize = 4
    /// Dev mode: the outbox is printed and served at /dev/outbox.
    package var dev = false
    /// Serve the OpenID Provider (issuer: `publicURL`).
    package var oidc = false
    /// Who may register clients over HTTP (RFC 7591).
    package enum Registration: String, Sendable {
        case off, token, open
    }
    package var registration = Registration.off
    /// The initial access token of `registration == .token`.
    package var registrationToken: String?
    /// Most self-registered clients.
    package var maxDynamicClients = 500
    /// Email over SMTP (`TRIFACTOR_SMTP_URL`); nil: emails wait in the outbox (dev mode shows them).
    package var smtp: SMTPSender.Settings?
    /// SMS and voice provider accounts in failover order (`TRIFACTOR_SMS_PROVIDER`).
    package var providers: [ProviderAccount] = []
    /// This server's public address, for providers' delivery receipts (nil: none asked for).
    package var publicURL: URL?
    /// The language of messages whose locale and recipient name none of the catalog's.
    package var messageLanguage = "en"
    /// What `serve` does with pending migrations.
    package var migrateOnStart = SchemaUpgrade.Policy.auto
    /// Tries per message (1, then after 2, 4, 8… seconds, at most a minute apart) before it is failed and audited.
    package var deliveryAttempts = 5
    /// Whether webhook endpoints may be private, loopback or link-local addresses (tests, internal receivers).
    package var webhooksAllowPrivate = false
    /// Seconds a failing webhook endpoint is retried before it is disabled.
    package var webhooksRetryFor: Double = 86_400
    /// Seconds a webhook endpoint has to answer.
    package var webhooksTimeout = 5
    /// The most SMS segments a text may take before its optional sentences are dropped (never the code).
    package var smsMaxSegments = 1
    /// The bearer token `GET /metrics` asks for (`TRIFACTOR_METRICS_TOKEN_FILE`); nil: `/metrics` answers 404.
    package var metricsToken: String?
    /// HTTP settings: where to listen (127.0.0.1:8080), threads, worker pool, body limit, TLS.
    package var http = HTTPServerConfiguration()
    /// Argon2id cost: passes and memory in KiB.
    package var argon2OpsLimit: UInt64 = 2
    package var argon2MemoryKiB = 19 * 1024
    /// Session lifetimes at AAL1 (password only) and AAL2 (a second factor).
    package var sessions = SessionPolicy()
    package var sessionsAAL2 = SessionPolicy(idleTimeout: 3600, absoluteLifetime: 24 * 3600)
    /// cracklib's packed dictionary (without its `.pwd` suffix) that new passwords are checked against.
    package var passwordDictionary = PasswordDictionary.defaultPath
    /// Live sessions per user; a sign-in beyond it ends the oldest.
    package var maxSessionsPerUser = 50
    /// How recent a password or second-factor proof must be to enroll a factor
    /// or create recovery codes, and a second-factor proof to remove a factor.
    package var reauthenticationWindow: TimeInterval = 300
    /// Which device enrollments must bring an approval key, and which gates it may have.
    package var deviceApprovalKeys = DeviceApprovalKeys.optional
    /// AES-256 key for secrets at rest (TOTP seeds): 32 bytes, base64, in a file.
    /// Dev mode creates it when missing.
    package var keyFile = "data/trifactor.key"
    /// Seconds the active key must have been sealing (so every instance has read it) before unused older keys are retired.
    package var keyRetireAfter: TimeInterval = 60
    /// WebAuthn relying party: id (a registrable domain), name, and the
    /// origins allowed exactly; dev mode also allows http://localhost:<any port>.
    package var rpID = "localhost"
    package var rpName = "Trifactor"
    package var origins: Set<String> = []
    /// The issuer shown in authenticator apps.
    package var totpIssuer = "Trifactor"
    /// The account-wide ceiling on second-factor proofs, across every flow:
    /// consecutive wrong proofs lock for a growing delay after 10, and for
    /// good (until an administrator resets the factors) at 100; only a
    /// success clears the count. Each flow also has its own budget
    /// (`SecondFactorService.attemptsPerPurpose`).
    package var mfaLockout = LockoutPolicy(freeAttempts: 10, baseDelay: 5, maximumDelay: 900, ceiling: 100)
    /// Lockout after consecutive failed sign-ins.
    package var lockout = LockoutPolicy()
    /// Sign-in attempts per client IP: burst, then a steady rate per second.
    package var signInPerIPBurst = 30.0
    package var signInPerIPRate = 0.5
    /// The sign-in bucket per client IP.
    var signInPerIP: RateLimiter.Limit { .init(burst: signInPerIPBurst, rate: signInPerIPRate) }
    /// Sign-ups per client IP: burst, then a steady rate per second.
    package var signUpPerIPBurst = 10.0
    package var signUpPerIPRate = 0.1
    /// Verification email resends per address: burst, then a steady rate per second.
    package var resendPerEmailBurst = 3.0
    package var resendPerEmailRate = 1.0 / 300
    /// Phone verification limits and test numbers.
    package var verify = VerifySettings()
    /// Seconds added to this instance's clock: a fault drill of clock skew between instances (0 in production).
    package var clockOffset: TimeInterval = 0
    /// Seconds to finish requests in flight on SIGTERM.
    package var drainTimeout = 30.0

    /// The defaults.
    package init() {}
}

/// Limits of the phone verification API (token buckets: a burst, then a rate
/// per second), and the test numbers that never send anything.
package struct VerifySettings: Sendable {
    package var perNumberBurst = 5.0
    package var perNumberRate = 5.0 / 600
    package var perKeyBurst = 100.0
    package var perKeyRate = 10.0
    package var perIPBurst = 30.0
    package var perIPRate = 0.5
    package var perCountryBurst = 200.0
    package var perCountryRate = 2.0
    /// Wrong codes a number may collect in a day, across requests, before
    /// new requests for it are refused.
    package var maxFailuresPerNumber = 10
    /// Number (E.164 digits) → fixed code: no message is sent for these.
    package var testNumbers: [String: String] = [:]
    /// Only these country calling codes receive codes (nil: all but the denied).
    package var allowedCountries: Set<Int>?
    /// Country calling codes that never receive codes.
    package var deniedCountries: Set<Int> = []
    /// Verifications allowed per hour and per day.
    package struct Budget: Sendable, Equatable {
        package var perHour: Double
        package var perDay: Double
        package init(perHour: Double, perDay: Double) {
            self.perHour = perHour
            self.perDay = perDay
        }
    }
    /// SMS-pumping budgets: a number prefix (country code and 6 national digits), a country, everything.
    package struct Budgets: Sendable, Equatable {
        package var prefix = Budget(perHour: 20, perDay: 100)
        package var country = Budget(perHour: 1_000, perDay: 10_000)
        package var total = Budget(perHour: 5_000, perDay: 50_000)
    }
    package var budgets = Budgets()
    /// The conversion guard: over `windowHours`, a country with at least `minimumVolume` verifications
    /// started of which fewer than `minimumRate` were completed gets no new ones until that recovers.
    package struct ConversionGuard: Sendable, Equatable {
        package var minimumRate = 0.2
        package var minimumVolume = 200
        /// Refuse new codes to such a country (429), or accept them and hold their messages for review.
        package var holdForReview = false
        package var windowHours = 24
    }
    package var conversion = ConversionGuard()
    package init() {}
}

/// What a new device enrollment must bring (`TRIFACTOR_DEVICE_APPROVAL_KEY`).
/// Factors enrolled before a stricter setting keep working and are listed as they are.
package enum DeviceApprovalKeys: String, Sendable, CaseIterable {
    /// An approval key with any gate, or none (an SDK that makes none; listed as not approval-bound).
    case optional
    /// An approval key, released by biometrics, the device passcode or a passphrase.
    case required
    /// An approval key released by biometrics as enrolled now: the passcode variant is refused.
    case biometric
}
