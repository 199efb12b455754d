import API
import Core
import Crypto
import Foundation
import Messaging
import Store

/// Sign-up, email verification and resending the code. Answers never tell
/// whether an address is registered: sign-up hashes before it looks, a
/// known address gets a warning email instead of an account, and resend
/// answers the same for every address.
struct AccountService: Sendable {
    /// The rate limits of the accounts feature.
    struct Limits: Sendable {
        var signUpPerIP: RateLimiter.Limit
        /// Code attempts per IP (the sign-in bucket).
        var codePerIP: RateLimiter.Limit
        var resendPerIP: RateLimiter.Limit
        var resendPerEmail: RateLimiter.Limit
    }

    let transactions: Transactions
    let clock: Clock
    let random: RandomSource
    let hashing: PasswordHashing
    let passwordPolicy: PasswordPolicy
    let verification: EmailVerification
    let outbox: Outbox
    let changes: ChangeFeed
    let limits: Limits
    /// How recent a second factor must be for changing the password.
    let reauthenticationWindow: TimeInterval
    /// The sessions feature's end hooks, run for each session "This wasn't me" ends.
    var endHooks: SessionEndHooks? = nil

    /// The second half of `resend` and of a password-reset request: the background pass that issues the codes.
    var resends: EmailResends {
        EmailResends(
            transactions: transactions, clock: clock, verification: verification,
            resets: PasswordResetCodes(random: random, outbox: outbox))
    }

    /// Creates an account and sends its verification code, or warns the
    /// owner of a known address; the same outcome either way.
    /// - Throws: `CommonFailure.invalidFields` (email, password, display name), `.rateLimited`, `.unavailable`.
    func signUp(
        email rawEmail: String, password: String, displayName rawName: String?, locale: String? = nil,
        client: AuditContext
    ) throws {
        var invalid: [FieldProblem] = []
        if let locale, outbox.texts.catalog.language(of: locale) == nil || !Self.isLocale(locale) {
            invalid.append(Self.localeProblem)
        }
        let email = EmailAddress(rawEmail)
        if email == nil { invalid.append(FieldProblem(name: "email", reason: "is not a valid email address")) }
        if let violation = passwordPolicy.violation(password, email: email) {
            invalid.append(FieldProblem(name: "password", reason: passwordPolicy.explain(violation)))
        }
        let displayName = rawName?.trimmingCharacters(in: .whitespacesAndNewlines)
        if let displayName,
            displayName.count > 100
                || displayName.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        {
            invalid.append(
                FieldProblem(name: "display_name", reason: "must be at most 100 characters, without control characters")
            )
        }
        guard invalid.isEmpty, let email else { throw CommonFailure.invalidFields(invalid) }

        let now = clock.now().millis
        if let wait = try transactions.write({
            try RateLimiter.take("signup:ip:\(client.clientKey)", limit: limits.signUpPerIP, nowMillis: now, on: $0)
        }) {
            throw CommonFailure.rateLimited(retryAfter: wait)
        }
        // Hash before looking, so a known email costs the same time as a new one.
        let hash = try hashing.hash(PasswordPolicy.normalize(password))
        do {
            try transactions.write { db in
                if let existing = try AccountRepository.find(email: email.value, on: db) {
                    try outbox.enqueueEmail(
                        "signup_exists", to: existing.email,
                        language: outbox.texts.language(locale: nil, user: existing.locale),
                        values: client.branded([:]), now: now, on: db)
                    try AuditLog.append(
                        client.event(.signupForExistingEmail, .denied, userID: existing.id), at: now, on: db)
                    return
                }
                let user = UserRecord(
                    id: .random(using: random), email: email.value,
                    displayName: displayName?.isEmpty == true ? nil : displayName,
                    passwordHash: hash, emailVerifiedAt: nil, createdAt: now, locale: locale?.lowercased())
                try AccountRepository.insert(user, on: db)
                try verification.issue(for: user, brand: client.brand, now: now, on: db)
                try AuditLog.append(client.event(.accountCreated, .success, userID: user.id), at: now, on: db)
                try AuditLog.append(client.event(.emailVerificationSent, .success, userID: user.id), at: now, on: db)
            }
        } catch let error as StoreError where error.kind == .uniqueViolation {
            // A concurrent sign-up took the address first: the same outcome as for a known email.
        }
    }

    /// Verifies the email of `email`'s account with `code`. A failure is
    /// counted and committed before the answer.
    /// - Throws: `AccountFailure.invalidCode` (wrong, expired, used, tried too
    ///   often, or no such account: one answer), `CommonFailure.invalidFields`, `.rateLimited`.
    func verifyEmail(email rawEmail: String, code rawCode: String, client: AuditContext) throws {
        guard let email = EmailAddress(rawEmail) else {
            throw CommonFailure.invalid("email", "is not a valid email address")
        }
        // As the person typed it (`123 456`, full-width digits); the wrong shape says so and costs nothing.
        guard let code = TypedCode.digits(rawCode, count: EmailVerification.codeLength) else {
            throw CommonFailure.invalid("code", "is the \(EmailVerification.codeLength)-digit code from the email")
        }
        let now = clock.now().millis
        enum Result {
            case verified(UserID)
            case refused(any Error)
        }
        let result = try transactions.write { db -> Result in
            if let wait = try RateLimiter.take(
                "code:ip:\(client.clientKey)", limit: limits.codePerIP, nowMillis: now, on: db)
            {
                return .refused(CommonFailure.rateLimited(retryAfter: wait))
            }
            guard let user = try AccountRepository.find(email: email.value, on: db) else {
                // An unknown address writes too, so both paths cost a commit alike.
                try AuditLog.append(
                    client.event(.emailVerificationFailed, .failure, detail: "unknown address"), at: now, on: db)
                return .refused(AccountFailure.invalidCode)
            }
            let outcome = try verification.check(code, for: user, now: now, on: db)
            guard outcome == .verified else {
                try AuditLog.append(client.event(.emailVerificationFailed, .failure, userID: user.id), at: now, on: db)
                return .refused(AccountFailure.invalidCode)
            }
            try AuditLog.append(client.event(.emailVerified, .success, userID: user.id), at: now, on: db)
            return .verified(user.id)
        }
        switch result {
        case .verified(let id): changes.publish("user:\(id.raw)")
        case .refused(let failure): throw failure
        }
    }

    /// Sends a new code to an unverified address; the same answer, and the
    /// same work, for unknown, unverified and verified ones: the address is
    /// queued, and `EmailResends.drain` looks it up a moment later.
    /// - Throws: `CommonFailure.invalidFields`, `.rateLimited`.
    func resend(email rawEmail: String, client: AuditContext) throws {
        guard let email = EmailAddress(rawEmail) else {
            throw CommonFailure.invalid("email", "is not a valid email address")
        }
        let now = clock.now().millis
        let wait = try transactions.write { db -> Int? in
            if let wait = try RateLimiter.take(
                "resend:ip:\(client.clientKey)", limit: limits.resendPerIP, nowMillis: now, on: db)
            {
                return wait
            }
            if let wait = try RateLimiter.take(
                "resend:email:\(SHA256.hex(email.value))", limit: limits.resendPerEmail, nowMillis: now, on: db)
            {
                return wait
            }
            try EmailResends.queue(email, client: client, now: now, on: db)
            return nil
        }
        if let wait { throw CommonFailure.rateLimited(retryAfter: wait) }
    }
}

/// The accounts feature's own refusal.
enum AccountFailure: Error, Equatable {
    /// An email code that is wrong, expired, used, tried too often, or for no account.
    case invalidCode
}

extension AccountService {
    /// Changes the caller's password: the current one again, a second factor
    /// proven within the re-authentication window when the user has one, and
    /// the password policy for the new one. Every other session ends and the
    /// owner is told by email. At most 5 tries a minute per user.
    /// - Throws: `SecondFactorFailure.secondFactorRequired`, `CommonFailure.invalidFields`
    ///   (`current_password` wrong, `new_password` refused), `.rateLimited`.
    func changePassword(_ caller: Caller, current: String, new: String, client: AuditContext) throws {
        let now = clock.now().millis
        let user = caller.user
        let hasFactor = try transactions.read { !(try FactorRepository.list(user.id, on: $0)).isEmpty }
        if hasFactor, !caller.session.freshSecondFactor(now: now, window: reauthenticationWindow) {
            throw SecondFactorFailure.secondFactorRequired
        }
        if let wait = try transactions.write({
            try RateLimiter.take(
                "password-change:\(user.id.raw)", limit: .init(burst: 5, rate: 1.0 / 60), nowMillis: now, on: $0)
        }) {
            throw CommonFailure.rateLimited(retryAfter: wait)
        }
        guard hashing.verify(PasswordPolicy.normalize(current), user.passwordHash) else {
            try transactions.write {
                try AuditLog.append(
                    client.event(.passwordChangeFailed, .failure, userID: user.id, detail: "wrong current password"),
                    at: now, on: $0)
            }
            throw CommonFailure.invalidFields([
                FieldProblem(name: "current_password", reason: "is not your current password")
            ])
        }
        if let violation = passwordPolicy.violation(new, email: EmailAddress(user.email)) {
            throw CommonFailure.invalidFields([
                FieldProblem(name: "new_password", reason: passwordPolicy.explain(violation))
            ])
        }
        guard PasswordPolicy.normalize(new) != PasswordPolicy.normalize(current) else {
            throw CommonFailure.invalidFields([
                FieldProblem(name: "new_password", reason: "must differ from the current password")
            ])
        }
        let hash = try hashing.hash(PasswordPolicy.normalize(new))
        try transactions.write { db in
            guard try AccountRepository.replacePasswordHash(user.id, old: user.passwordHash, new: hash, on: db) else {
                throw CommonFailure.invalidFields([
                    FieldProblem(name: "current_password", reason: "changed meanwhile: sign in again")
                ])
            }
            let ended = try SessionRepository.endOthers(
                user.id, keep: caller.session.id, at: now, reason: .passwordChanged, on: db)
            try outbox.enqueueEmail(
                "password_changed", to: user.email, language: outbox.texts.language(locale: nil, user: user.locale),
                values: client.branded(["sessions": .number(ended.count)]), now: now, on: db)
            try AuditLog.append(
                client.event(
                    .passwordChanged, .success, userID: user.id, detail: "other sessions ended=\(ended.count)"),
                at: now, on: db)
        }
        changes.publish("user:\(user.id.raw)")
    }

    // MARK: Language

    /// Sets the language of the caller's messages (nil: the server's default); returns the account.
    /// - Throws: `CommonFailure.invalidFields` for a locale of a language Trifactor has no messages in.
    func setLocale(_ caller: Caller, _ locale: String?, client: AuditContext) throws -> UserInfo {
        if let locale, outbox.texts.catalog.language(of: locale) == nil || !Self.isLocale(locale) {
            throw CommonFailure.invalidFields([Self.localeProblem])
        }
        let now = clock.now().millis
        // Cached sessions hold the user: they read it again.
        defer { changes.publish("user:\(caller.user.id.raw)") }
        return try transactions.write { db in
            try AccountRepository.setLocale(caller.user.id, locale?.lowercased(), on: db)
            try AuditLog.append(
                client.event(
                    .accountUpdated, .success, userID: caller.user.id,
                    detail: "locale=\(locale?.lowercased() ?? "default")"),
                at: now, on: db)
            guard let user = try AccountRepository.find(id: caller.user.id, on: db) else {
                throw CommonFailure.unauthenticated
            }
            return user.info
        }
    }

    /// `de`, `de-de`, `pt-BR`, `zh-Hans-CN`: a BCP 47 tag of letters and digits, at most 35 characters.
    static func isLocale(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        return text.count <= 35 && (2...3).contains(parts[0].count) && parts[0].allSatisfy { $0.isASCII && $0.isLetter }
            && parts.dropFirst().allSatisfy {
                (2...8).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
            }
    }

    static let localeProblem = FieldProblem(
        name: "locale",
        reason: "must be a language tag (de-de, ar) of a language Trifactor has messages in: "
            + MessageCatalog.bundled.languages.keys.sorted().joined(separator: ", "))

}
