import Core
import Crypto
package import Foundation
package import HTTP
package import Logging
import Messaging
package import Store
import WebAuthn

/// Everything trifactord runs on, built once from the configuration: the
/// composition root. Each service receives only the dependencies it uses;
/// building this does no I/O (the database is opened, the key file and the
/// password blocklist read, before).
struct Services: Sendable {
    let configuration: Configuration
    let transactions: Transactions
    let clock: Clock
    let logger: Logger
    /// Where the outbox delivers; nil when no provider is configured (then
    /// phone verification answers 503 rather than accept what cannot be sent).
    let sender: (any MessageSender)?
    let hub: LongPollHub
    let sessionCache: SessionCache
    let changes: ChangeFeed
    let accounts: AccountService
    let sessions: SessionService
    let factors: SecondFactors
    let secondFactors: SecondFactorService
    let enrollments: EnrollmentService
    let push: PushService
    let passwordless: PasswordlessService
    let authorizations: AuthorizationService
    let verifications: PhoneVerificationService
    let keys: APIKeys
    let admin: AdminService
    let passwordResets: PasswordResetService

    var database: any Database { transactions.database }

    /// The live graph over an open `database`.
    /// - Parameters:
    ///   - sealer: seals TOTP secrets; nil without a key file (then TOTP enrollment answers 503).
    ///   - passwords: the policy every new password meets (the common-password list and cracklib's dictionary).
    /// - Throws: `PasswordHasher.Failure` for Argon2id parameters libsodium refuses.
    static func live(database: any Database, configuration c: Configuration, sealer: KeyRing?, passwords: PasswordPolicy, sender: (any MessageSender)?,
                     clock: Clock = .system, random: RandomSource = SecureRandom.source, logger: Logger = .standardError) throws -> Services {
        let transactions = Transactions(database: database, logger: logger)
        let hub = LongPollHub()
        let cache = SessionCache()
        let changes = ChangeFeed.live(local: local(hub: hub, cache: cache), database: database, logger: logger)
        let outbox = Outbox(random: random, texts: MessageTexts(catalog: MessageCatalog.bundled.fallingBack(to: c.messageLanguage), brand: c.totpIssuer,
                                                                  maxSegments: c.smsMaxSegments))
        let hashing = try PasswordHashing.argon2id(opsLimit: c.argon2OpsLimit, memoryKiB: c.argon2MemoryKiB)
        let policies = SessionPolicies(aal1: c.sessions, aal2: c.sessionsAAL2)
        let issuer = SessionIssuer(random: random, outbox: outbox, maxLive: c.maxSessionsPerUser)
        let verifications = PhoneVerificationService(transactions: transactions, clock: clock, random: random, outbox: outbox, logger: logger,
                                                     settings: c.verify, canDeliver: sender?.channels.contains(.sms) == true,
                                                     testBook: TestNumberBook(configured: c.verify.testNumbers))
        let relyingParty = RelyingParty(id: c.rpID, name: c.rpName, origins: c.origins, allowsAnyLocalhostPort: c.dev)
        let factors = SecondFactors(
            phone: PhoneFactor(transactions: transactions, random: random, verifications: verifications, brand: c.totpIssuer),
            totp: TOTPFactor(random: random, sealer: sealer, issuer: c.totpIssuer),
            recoveryCodes: RecoveryCodesFactor(transactions: transactions, clock: clock, random: random, outbox: outbox),
            device: DeviceKeyFactor(transactions: transactions, random: random, approvalKeys: c.deviceApprovalKeys),
            passkey: PasskeyFactor(transactions: transactions, random: random, relyingParty: relyingParty, logger: logger))
        let push = PushService(transactions: transactions, clock: clock, random: random, changes: changes)
        let secondFactors = SecondFactorService(transactions: transactions, clock: clock, random: random, factors: factors, lockout: c.mfaLockout,
                                                issuer: issuer, push: push, policies: policies, changes: changes)
        let sessions = SessionService(
            transactions: transactions, clock: clock, random: random, hashing: hashing, policies: policies, lockout: c.lockout,
            signInPerIP: c.signInPerIP, cache: cache, changes: changes, issuer: issuer,
            hints: { try secondFactors.hints($0, on: $1) },
            startSecondStep: { try secondFactors.startPending($0, passwordVerifiedAt: $1, now: $1, on: $2) })
        let signUpLimit = RateLimiter.Limit(burst: c.signUpPerIPBurst, rate: c.signUpPerIPRate)
        let accounts = AccountService(
            transactions: transactions, clock: clock, random: random, hashing: hashing, passwordPolicy: passwords,
            verification: EmailVerification(random: random, outbox: outbox), outbox: outbox, changes: changes,
            limits: .init(signUpPerIP: signUpLimit, codePerIP: c.signInPerIP, resendPerIP: signUpLimit,
                          resendPerEmail: .init(burst: c.resendPerEmailBurst, rate: c.resendPerEmailRate)),
            reauthenticationWindow: c.reauthenticationWindow)
        return Services(
            configuration: c, transactions: transactions, clock: clock, logger: logger, sender: sender, hub: hub, sessionCache: cache, changes: changes,
            accounts: accounts, sessions: sessions, factors: factors, secondFactors: secondFactors,
            enrollments: EnrollmentService(transactions: transactions, clock: clock, random: random, factors: factors,
                                           reauthenticationWindow: c.reauthenticationWindow, changes: changes),
            push: push,
            passwordless: PasswordlessService(transactions: transactions, clock: clock, random: random, signInPerIP: c.signInPerIP, issuer: issuer,
                                              passkeys: factors.passkey, push: push, changes: changes),
            authorizations: AuthorizationService(transactions: transactions, clock: clock, random: random, secondFactors: secondFactors),
            verifications: verifications, keys: APIKeys(random: random, clock: clock),
            admin: AdminService(transactions: transactions, clock: clock, outbox: outbox, changes: changes, policies: policies,
                                testBook: verifications.testBook),
            passwordResets: PasswordResetService(transactions: transactions, clock: clock, hashing: hashing, passwordPolicy: passwords,
                                                 codes: PasswordResetCodes(random: random, outbox: outbox), secondFactors: secondFactors, push: push,
                                                 outbox: outbox, changes: changes, limits: accounts.limits))
    }

    /// The local half of the change feed: this process's long polls and session cache.
    var local: @Sendable (String) -> Void { Self.local(hub: hub, cache: sessionCache) }

    private static func local(hub: LongPollHub, cache: SessionCache) -> @Sendable (String) -> Void {
        { key in
            hub.notify(key)
            cache.invalidate(key)
        }
    }
}

/// Trifactor's HTTP application: every feature's routes over the services.
package enum Application {
    /// The router with every feature registered.
    /// - Throws: `ResourceFailure` when a file the dev pages need is missing.
    static func router(_ s: Services, probe: ReadinessProbe) throws -> Router {
        var router = Router()
        HealthRoutes(probe: probe).register(on: &router)
        try ContractRoutes().register(on: &router)
        MetricsRoutes(token: s.configuration.metricsToken, transactions: s.transactions, clock: s.clock).register(on: &router)
        let idempotency = Idempotency(transactions: s.transactions, clock: s.clock)
        var routes = APIRoutes(router: router, sessions: s.sessions, idempotency: idempotency)
        AccountsRoutes(accounts: s.accounts).register(on: &routes)
        SessionsRoutes(sessions: s.sessions).register(on: &routes)
        let policies = s.sessions.policies
        EnrollmentRoutes(enrollments: s.enrollments).register(on: &routes)
        let mfa = MFARoutes(secondFactors: s.secondFactors, passkeys: s.factors.passkey, policies: policies)
        mfa.register(on: &routes)
        PasswordResetRoutes(resets: s.passwordResets, mfa: mfa).register(on: &routes)
        PushRoutes(push: s.push).register(on: &routes)
        PasswordlessRoutes(passwordless: s.passwordless, policies: policies).register(on: &routes)
        AuthorizationRoutes(authorizations: s.authorizations, mfa: mfa).register(on: &routes)
        AdminRoutes(admin: s.admin, keys: AdminKeys(random: SecureRandom.source, clock: s.clock), transactions: s.transactions, clock: s.clock)
            .register(on: &routes)
        router = routes.router
        let v = s.configuration.verify
        VerifyRoutes(verifications: s.verifications, keys: s.keys, transactions: s.transactions, clock: s.clock, idempotency: idempotency,
                     perIP: .init(burst: v.perIPBurst, rate: v.perIPRate)).register(on: &router)
        if !s.configuration.providers.isEmpty {
            DeliveryRoutes(transactions: s.transactions, clock: s.clock, accounts: s.configuration.providers, publicURL: s.configuration.publicURL,
                           perIP: .init(burst: v.perIPBurst, rate: v.perIPRate), verifications: s.verifications).register(on: &router)
        }
        if s.configuration.dev { try DevRoutes(transactions: s.transactions).register(on: &router) }
        return router
    }

    /// Opens the database, migrates it, reads the key file, the password
    /// blocklist and dictionary, and starts listening, with the dev phone as the message
    /// sender in dev mode.
    /// - Throws: a `StoreError`, `HTTPServerError`, `KeyFile.Failure` or `ResourceFailure` whose description is one sentence.
    package static func start(_ configuration: Configuration, logger: Logger = .standardError) throws -> Runtime {
        let passwords = try CommonPasswords.policy(dictionary: configuration.passwordDictionary)
        let database = try openDatabase(url: configuration.databaseURL, poolSize: configuration.databasePoolSize)
        let applied = try database.migrate(Schema.migrations)
        if !applied.isEmpty { logger.log("info", "migrated", ["versions": .string(applied.map(String.init).joined(separator: ","))]) }
        let existed = FileManager.default.fileExists(atPath: configuration.keyFile)
        if !existed { try KeyFile.checkOpens(nil, path: configuration.keyFile, database: database) }
        let sealer = try KeyFile.load(configuration, logger: logger)
        if existed { try KeyFile.checkOpens(sealer, path: configuration.keyFile, database: database) }
        var senders: [any MessageSender] = []
        if let smtp = configuration.smtp {
            senders.append(SMTPSender(smtp))
            logger.log("info", "smtp", ["server": .string(smtp.url.host ?? ""), "from": .string(smtp.from), "starttls_required": .bool(smtp.requireTLS)])
        }
        if !configuration.providers.isEmpty {
            var providers: [any MessageSender] = []
            for account in configuration.providers {
                switch account.kind {
                case .vonage:
                    do { providers.append(try VonageSender(account, callbackBase: configuration.publicURL)) } catch {
                        throw ResourceFailure(description: error.description)
                    }
                case .twilio:
                    providers.append(TwilioSender(account, callbackBase: configuration.publicURL))
                }
                logger.log("info", "sms_provider", ["account": .string(account.description),
                                                    "channels": .string(account.channels.map(\.rawValue).sorted().joined(separator: ","))])
            }
            senders.append(FailoverSender(providers) { failure, message in
                logger.log("warn", "provider_failover", ["message_id": .string(message.id), "channel": .string(message.channel.rawValue),
                                                         "reason": .string(failure.reason)])
            })
            if configuration.publicURL == nil {
                logger.log("warn", "no_public_url", ["detail": "providers are not asked for delivery receipts until TRIFACTOR_PUBLIC_URL is set"])
            }
        }
        if configuration.dev {
            senders.append(DevPhoneSender { message in
                logger.log("info", "dev_phone", ["message_id": .string(message.id), "channel": .string(message.channel.rawValue),
                                                 "to": .string(message.to), "text": .string(message.text)])
            })
        } else if configuration.providers.isEmpty {
            logger.log("warn", "no_phone_sender", ["detail": "phone codes are refused (503) until an SMS and voice provider is configured"])
        }
        let sender: (any MessageSender)? = senders.isEmpty ? nil : RoutingSender(senders)
        var clock = Clock.system
        if configuration.clockOffset != 0 {
            let offset = configuration.clockOffset
            clock = Clock { Date().addingTimeInterval(offset) }
            logger.log("warn", "clock_offset", ["seconds": .double(offset), "detail": "this instance's clock is moved for a fault drill"])
        }
        let services = try Services.live(database: database, configuration: configuration, sealer: sealer, passwords: passwords, sender: sender,
                                         clock: clock, logger: logger)
        return try start(services)
    }

    /// Starts the server and the background work over ready services.
    /// `tasks` runs the background loops on threads of their own; tests pass
    /// `.manual` and drive them with `Runtime.tick()`.
    static func start(_ s: Services, tasks mode: PeriodicTask.Mode = .threads, extraRoutes: (inout Router) -> Void = { _ in }) throws -> Runtime {
        let probe = ReadinessProbe(database: s.database, logger: s.logger)
        probe.check()
        var router = try router(s, probe: probe)
        extraRoutes(&router)
        var http = s.configuration.http
        http.databaseThreads = s.configuration.databasePoolSize
        let clock = s.clock
        let server = HTTPServer(configuration: http, router: router, logger: s.logger, hub: s.hub, now: { clock.now() })
        #if DEBUG
        // A regression that waits on the database on an HTTP thread stops the tests at once.
        DatabaseAccess.onAcquire { precondition(!HTTPServer.isHTTPThread, "database work on an HTTP thread: give the route an executor") }
        #endif
        try server.start()
        MetricsRoutes(token: s.configuration.metricsToken, transactions: s.transactions, clock: s.clock).registerGauges { [weak server] in server }
        var tasks: [PeriodicTask] = [PeriodicTask(name: "readiness", interval: 1, mode: mode, logger: s.logger) { probe.check(); return false }]
        // Verification codes asked for again: issued here, a moment after the (uniform) answer.
        let resends = s.accounts.resends
        tasks.append(PeriodicTask(name: "email-resends", interval: 0.2, mode: mode, logger: s.logger) { try resends.drain() == EmailResends.batch })
        if let sender = s.sender {
            let verifications = s.verifications
            let dispatcher = OutboxDispatcher(transactions: s.transactions, clock: s.clock, sender: sender, keepsDelivered: s.configuration.dev,
                                              maxAttempts: s.configuration.deliveryAttempts) { ref, db in
                if ref.hasPrefix("verify:") { try verifications.deliveryFailed(ref: ref, on: db) }
            }
            tasks.append(PeriodicTask(name: "outbox", interval: 0.1, mode: mode, logger: s.logger) { try dispatcher.runOnce() > 0 })
        }
        // Test numbers administrators add are read again every few seconds (another instance's change included).
        tasks.append(PeriodicTask(name: "test-numbers", interval: 3, mode: mode, logger: s.logger) {
            try s.transactions.read { try s.verifications.testBook.refresh(on: $0) }
            return false
        })
        // Phone verification deadlines live in the database; this applies the due ones (a restart loses none).
        tasks.append(PeriodicTask(name: "verify-timers", interval: 1, mode: mode, logger: s.logger) {
            // A full batch means more may be due: go again at once.
            try s.verifications.runDue() == PhoneVerificationService.dueBatch
        })
        // Session uses seen in memory, written once a second in one transaction.
        tasks.append(PeriodicTask(name: "session-uses", interval: 1, mode: mode, logger: s.logger) {
            try s.sessions.writeUses()
            return false
        })
        if let ring = s.factors.totp.sealer {
            // Picks up a rotated key ring, re-seals secrets under older keys, retires those nothing uses.
            let resealer = SecretResealer(transactions: s.transactions, ring: ring, logger: s.logger, grace: s.configuration.keyRetireAfter)
            tasks.append(PeriodicTask(name: "key-ring", interval: 5, mode: mode, logger: s.logger) {
                try resealer.pass()
                return false
            })
        }
        tasks.append(PeriodicTask(name: "housekeeping", interval: 600, mode: mode, logger: s.logger) {
            let dialect = s.database.dialect
            let r = try s.transactions.write { try Housekeeping.purge(now: s.clock.now().millis, dialect: dialect, on: $0) }
            if let r, r != Housekeeping.Report() { s.logger.log("info", "housekeeping", ["purged": .string(String(describing: r))]) }
            return false
        })
        for task in tasks { task.start() }
        let hub = s.hub
        let listener = ChangeFeed.listen(local: s.local, lost: { hub.notifyAll() }, database: s.database)
        s.logger.log("info", "listening", ["host": .string(s.configuration.http.host), "port": .int(server.port),
                                           "tls": .bool(s.configuration.http.usesTLS), "dev": .bool(s.configuration.dev)])
        return Runtime(server: server, services: s, tasks: tasks, listener: listener)
    }
}

/// A running Trifactor: the HTTP server and its background work.
package final class Runtime: Sendable {
    package let server: HTTPServer
    let services: Services
    let tasks: [PeriodicTask]
    let listener: (any DatabaseListener)?

    init(server: HTTPServer, services: Services, tasks: [PeriodicTask], listener: (any DatabaseListener)?) {
        self.server = server
        self.services = services
        self.tasks = tasks
        self.listener = listener
    }

    /// The database it serves.
    package var database: any Database { services.database }

    /// Runs one pass of every background loop now (tests drive them this way).
    func tick() {
        for task in tasks { task.tick() }
    }

    /// Stops taking requests, finishes those in flight, then stops delivering and listening.
    package func stop(drainTimeout: TimeInterval) {
        server.stop(drainTimeout: drainTimeout)
        for task in tasks { task.stop() }
        listener?.stop()
    }
}
