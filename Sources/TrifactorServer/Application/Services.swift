package import Core
package import Crypto
import Foundation
import HTTP
package import Logging
package import Messaging
package import Store
import WebAuthn

/// Everything trifactord runs on, built once from the configuration: the
/// composition root. Each service receives only the dependencies it uses;
/// building this does no I/O (the database is opened, the key file and the
/// password blocklist read, before).
package struct Services: Sendable {
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
    package let keys: APIKeys
    let admin: AdminService
    /// The admin API's keys.
    let adminKeys: AdminKeys
    let passwordResets: PasswordResetService
    /// Each user's sitekey and the browsers recognised for their account.
    let sitekeys: SitekeyService
    /// The OpenID Provider's clients, kept (through the admin API, or on the host) even while the provider is off.
    let clients: ClientService
    /// The OpenID Provider; nil unless `TRIFACTOR_OIDC` is on.
    let provider: Provider?
    /// The key ring (nil without a key file): the deployment doctor's check proves it.
    let sealer: KeyRing?
    /// Webhook endpoints (the admin API and `trifactord webhooks`); their messages are queued by the audit log.
    let webhooks: WebhookService

    var database: any Database { transactions.database }

    /// The live graph over an open `database`.
    /// - Parameters:
    ///   - sealer: seals TOTP secrets; nil without a key file (then TOTP enrollment answers 503).
    ///   - passwords: the policy every new password meets (the common-password list and cracklib's dictionary).
    /// - Throws: `PasswordHasher.Failure` for Argon2id parameters libsodium refuses.
    package static func live(
        database: any Database, configuration c: Configuration, sealer: KeyRing?, passwords: PasswordPolicy,
        sender: (any MessageSender)?,
        clock: Clock = .system, random: RandomSource = SecureRandom.source, logger: Logger = .standardError
    ) throws -> Services {
        let transactions = Transactions(database: database, logger: logger)
        let hub = LongPollHub()
        let cache = SessionCache()
        let changes = ChangeFeed.live(local: local(hub: hub, cache: cache), database: database, logger: logger)
        let outbox = Outbox(
            random: random,
            texts: MessageTexts(
                catalog: MessageCatalog.bundled.fallingBack(to: c.messageLanguage), brand: c.totpIssuer,
                maxSegments: c.smsMaxSegments))
        let hashing = try PasswordHashing.argon2id(opsLimit: c.argon2OpsLimit, memoryKiB: c.argon2MemoryKiB)
        let policies = SessionPolicies(aal1: c.sessions, aal2: c.sessionsAAL2)
        let issuer = SessionIssuer(random: random, outbox: outbox, maxLive: c.maxSessionsPerUser)
        let verifications = PhoneVerificationService(
            transactions: transactions, clock: clock, random: random, outbox: outbox, logger: logger,
            settings: c.verify, canDeliver: sender?.channels.contains(.sms) == true,
            testBook: TestNumberBook(configured: c.verify.testNumbers))
        // The hosted sign-in's pages are served at the issuer: passkeys are asked for from there too.
        let issuerOrigin = c.oidc ? c.publicURL.flatMap { HostedPage.origin($0.absoluteString) } : nil
        let relyingParty = RelyingParty(
            id: c.rpID, name: c.rpName, origins: c.origins.union(issuerOrigin.map { [$0] } ?? []),
            allowsAnyLocalhostPort: c.dev)
        let factors = SecondFactors(
            phone: PhoneFactor(
                transactions: transactions, random: random, verifications: verifications, brand: c.totpIssuer),
            totp: TOTPFactor(random: random, sealer: sealer, issuer: c.totpIssuer),
            recoveryCodes: RecoveryCodesFactor(
                transactions: transactions, clock: clock, random: random, outbox: outbox),
            device: DeviceKeyFactor(transactions: transactions, random: random, approvalKeys: c.deviceApprovalKeys),
            passkey: PasskeyFactor(
                transactions: transactions, random: random, relyingParty: relyingParty, logger: logger))
        let push = PushService(transactions: transactions, clock: clock, random: random, changes: changes)
        let secondFactors = SecondFactorService(
            transactions: transactions, clock: clock, random: random, factors: factors, lockout: c.mfaLockout,
            issuer: issuer, push: push, policies: policies, changes: changes)
        let sessions = SessionService(
            transactions: transactions, clock: clock, random: random, hashing: hashing, policies: policies,
            lockout: c.lockout,
            signInPerIP: c.signInPerIP, cache: cache, changes: changes, issuer: issuer,
            hints: { try secondFactors.hints($0, on: $1) },
            startSecondStep: { try secondFactors.startPending($0, passwordVerifiedAt: $1, now: $1, on: $2) })
        let clients = ClientService(transactions: transactions, clock: clock, random: random, fapi2Everywhere: c.fapi2)
        var provider: Provider?
        if c.oidc, let url = c.publicURL {
            guard let sealer else {
                throw ResourceFailure(
                    description: "The OpenID Provider needs the key file: its signing keys are sealed with it.")
            }
            provider = Provider(
                publicURL: url, sealer: sealer, clients: clients, transactions: transactions, clock: clock,
                random: random, sessions: sessions, secondFactors: secondFactors, outbox: outbox, brand: c.totpIssuer,
                language: c.messageLanguage, registration: c.registration,
                registrationToken: c.registrationToken, maxDynamicClients: c.maxDynamicClients,
                requirePushedRequests: c.requirePushedRequests, dpopNonces: c.dpopNonces, fapi2Everywhere: c.fapi2,
                detailsSchemas: c.detailsSchemas)
            provider?.conversion = c.verify.conversion
            sessions.endHooks.add { [provider] session, user, now, db in
                try provider?.sessionEnded(session, user: user, now: now, on: db)
            }
        }
        let signUpLimit = RateLimiter.Limit(burst: c.signUpPerIPBurst, rate: c.signUpPerIPRate)
        let accounts = AccountService(
            transactions: transactions, clock: clock, random: random, hashing: hashing, passwordPolicy: passwords,
            verification: EmailVerification(random: random, outbox: outbox), outbox: outbox, changes: changes,
            limits: .init(
                signUpPerIP: signUpLimit, codePerIP: c.signInPerIP, resendPerIP: signUpLimit,
                resendPerEmail: .init(burst: c.resendPerEmailBurst, rate: c.resendPerEmailRate)),
            reauthenticationWindow: c.reauthenticationWindow, endHooks: sessions.endHooks)
        return Services(
            configuration: c, transactions: transactions, clock: clock, logger: logger, sender: sender, hub: hub,
            sessionCache: cache, changes: changes,
            accounts: accounts, sessions: sessions, factors: factors, secondFactors: secondFactors,
            enrollments: EnrollmentService(
                transactions: transactions, clock: clock, random: random, factors: factors,
                reauthenticationWindow: c.reauthenticationWindow, changes: changes),
            push: push,
            passwordless: PasswordlessService(
                transactions: transactions, clock: clock, random: random, signInPerIP: c.signInPerIP, issuer: issuer,
                passkeys: factors.passkey, push: push, changes: changes),
            authorizations: AuthorizationService(
                transactions: transactions, clock: clock, random: random, secondFactors: secondFactors),
            verifications: verifications, keys: APIKeys(random: random, clock: clock),
            admin: AdminService(
                transactions: transactions, clock: clock, random: random, outbox: outbox, changes: changes,
                policies: policies,
                testBook: verifications.testBook, endHooks: sessions.endHooks),
            adminKeys: AdminKeys(random: random, clock: clock),
            passwordResets: PasswordResetService(
                transactions: transactions, clock: clock, hashing: hashing, passwordPolicy: passwords,
                codes: PasswordResetCodes(random: random, outbox: outbox), secondFactors: secondFactors, push: push,
                outbox: outbox, changes: changes, limits: accounts.limits, endHooks: sessions.endHooks),
            sitekeys: SitekeyService(transactions: transactions, clock: clock, random: random),
            clients: clients, provider: provider, sealer: sealer,
            webhooks: WebhookService(
                transactions: transactions, clock: clock, random: random, sealer: sealer,
                sender: WebhookSender(allowPrivate: c.webhooksAllowPrivate, timeout: c.webhooksTimeout)))
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
