import Core
import Crypto
import Foundation
import Messaging
import Store

/// Account recovery for a forgotten password (NIST SP 800-63B §6.1.2.3):
///
/// 1. `request`: the same answer and the same work for every address; a
///    code is emailed a moment later (`EmailResends`) when the address is an
///    account's.
/// 2. `verify`: the emailed code gives a reset credential, and the account's
///    second factors.
/// 3. `challenge` and `complete`: with a second factor proven when the
///    account has one (a reset is never a way around it; a user who lost
///    every factor asks an administrator, `trifactord users reset-mfa`), the
///    new password, checked like any other, replaces the old; every session
///    ends, the password lockout clears, the owner is emailed, all of it
///    audited.
struct PasswordResetService: Sendable {
    let transactions: Transactions
    let clock: Clock
    let hashing: PasswordHashing
    let passwordPolicy: PasswordPolicy
    let codes: PasswordResetCodes
    let secondFactors: SecondFactorService
    let push: PushService
    let outbox: Outbox
    let changes: ChangeFeed
    let limits: AccountService.Limits
    /// The sessions feature's end hooks, run for each session a reset ends.
    var endHooks: SessionEndHooks? = nil

    /// Asks for a reset code for `email`; the same answer whatever the address.
    /// - Throws: `CommonFailure.invalidFields` (not an email address), `.rateLimited`.
    func request(email rawEmail: String, client: AuditContext) throws {
        guard let email = EmailAddress(rawEmail) else {
            throw CommonFailure.invalid("email", "is not a valid email address")
        }
        let now = clock.now().millis
        let wait = try transactions.write { db -> Int? in
            if let wait = try RateLimiter.take(
                "reset:ip:\(client.clientKey)", limit: limits.resendPerIP, nowMillis: now, on: db)
            {
                return wait
            }
            if let wait = try RateLimiter.take(
                "reset:email:\(SHA256.hex(email.value))", limit: limits.resendPerEmail, nowMillis: now, on: db)
            {
                return wait
            }
            try EmailResends.queue(email, purpose: .passwordReset, client: client, now: now, on: db)
            return nil
        }
        if let wait { throw CommonFailure.rateLimited(retryAfter: wait) }
    }

    /// What a right reset code gives.
    struct Verified: Sendable {
        let credential: String
        let expiresAt: Int64
        let hints: [SessionService.Hint]
    }

    /// Checks the emailed code: the reset credential, and the factors to prove.
    /// A code of the wrong shape costs no attempt.
    /// - Throws: `CommonFailure.invalidFields` (not an address, or not 8 digits), `.rateLimited`,
    ///   `AccountFailure.invalidCode` (wrong, expired, used, tried too often, or no such account: one answer).
    func verify(email rawEmail: String, code rawCode: String, client: AuditContext) throws -> Verified {
        guard let email = EmailAddress(rawEmail) else {
            throw CommonFailure.invalid("email", "is not a valid email address")
        }
        guard let code = TypedCode.digits(rawCode, count: PasswordResetCodes.codeLength) else {
            throw CommonFailure.invalid("code", "is the \(PasswordResetCodes.codeLength)-digit code from the email")
        }
        let now = clock.now().millis
        enum Result {
            case verified(Verified, UserID)
            case refused(any Error)
        }
        let result = try transactions.write { db -> Result in
            if let wait = try RateLimiter.take(
                "code:ip:\(client.clientKey)", limit: limits.codePerIP, nowMillis: now, on: db)
            {
                return .refused(CommonFailure.rateLimited(retryAfter: wait))
            }
            let user = try AccountRepository.find(email: email.value, on: db)
            guard let user, user.disabledAt == nil else {
                // The same work as a wrong code: a counted attempt on no row.
                try PasswordResetCodes.countDecoyAttempt(on: db)
                try AuditLog.append(
                    client.event(.passwordResetFailed, .failure, detail: "no such account"), at: now, on: db)
                return .refused(AccountFailure.invalidCode)
            }
            switch try codes.check(code, for: user, now: now, on: db) {
            case .verified(let credential):
                // The address is marked verified only when the new password is set (`complete`): an account
                // someone else opened with this address must not become theirs, verified, meanwhile.
                try AuditLog.append(client.event(.passwordResetVerified, .success, userID: user.id), at: now, on: db)
                let hints = try secondFactors.hints(user.id, on: db)
                return .verified(
                    Verified(
                        credential: credential, expiresAt: now + PasswordResetCodes.credentialLifetimeMillis,
                        hints: hints), user.id)
            case .wrong, .unusable:
                try AuditLog.append(
                    client.event(.passwordResetFailed, .failure, userID: user.id, detail: "wrong code"), at: now, on: db
                )
                return .refused(AccountFailure.invalidCode)
            }
        }
        switch result {
        case .verified(let verified, let id):
            changes.publish("user:\(id.raw)")
            return verified
        case .refused(let failure): throw failure
        }
    }

    /// Sends (or issues) the challenge of one of the account's factors; for a device, also pushes it with a number to match.
    /// - Throws: `PasswordResetFailure.invalidCredential`, `SecondFactorFailure.factorNotFound`, the strategy's refusals.
    func challenge(credential: String, factorID: FactorID, client: AuditContext) throws -> (
        ChallengeIssued, push: PushService.Created?
    ) {
        let now = clock.now()
        let (holder, factor) = try transactions.read { db in
            guard let holder = try PasswordResetCodes.holder(of: credential, now: now.millis, on: db) else {
                throw PasswordResetFailure.invalidCredential
            }
            return (holder, try SecondFactorService.factor(factorID, of: holder.userID, on: db))
        }
        RequestTransaction.current?.attribute(to: holder.userID)
        let purpose = Purpose.passwordReset(resetHash: holder.hash)
        let issued = try secondFactors.send(factor, purpose: purpose, intent: .code, client: client, now: now)
        let pushed =
            factor.kind == .device ? try push.create(for: factor, purpose: purpose, client: client, now: now) : nil
        return (issued, pushed)
    }

    /// "Call me instead" for a reset's phone challenge: the same code, spoken by a voice call now.
    /// - Throws: `PasswordResetFailure.invalidCredential`, `SecondFactorFailure.factorNotFound`, `.unusable` (not a phone, or nothing texted yet).
    func callInstead(credential: String, factorID: FactorID, client: AuditContext) throws {
        let now = clock.now()
        let (holder, factor) = try transactions.read { db in
            guard let holder = try PasswordResetCodes.holder(of: credential, now: now.millis, on: db) else {
                throw PasswordResetFailure.invalidCredential
            }
            let factor = try SecondFactorService.factor(factorID, of: holder.userID, on: db)
            try SecondFactorService.refuseFrozen(holder.userID, on: db)
            return (holder, factor)
        }
        RequestTransaction.current?.attribute(to: holder.userID)
        guard factor.kind == .phone else { throw SecondFactorFailure.unusable }
        try secondFactors.factors.phone.callNow(factor, purpose: .passwordReset(resetHash: holder.hash), client: client)
    }

    /// Sets the new password, with the proof of a factor when the account has one (nil: none given).
    /// - Throws: `PasswordResetFailure.invalidCredential`, `CommonFailure.invalidFields` (`new_password`),
    ///   `SecondFactorFailure.secondFactorRequired` (the account has factors and none was proven),
    ///   `.invalidCode`, `.locked`, `.factorNotFound`, `.unusable`.
    func complete(
        credential: String, newPassword: String, factorID: FactorID?, answer: SecondFactorService.Answer?,
        client: AuditContext
    ) throws {
        let now = clock.now()
        let (holder, user, hasFactors) = try transactions.read { db in
            guard let holder = try PasswordResetCodes.holder(of: credential, now: now.millis, on: db),
                let user = try AccountRepository.find(id: holder.userID, on: db)
            else { throw PasswordResetFailure.invalidCredential }
            return (holder, user, !(try FactorRepository.list(user.id, on: db)).isEmpty)
        }
        // Refused before any hashing: an account with factors needs a proof.
        if hasFactors && (factorID == nil || answer == nil) { throw SecondFactorFailure.secondFactorRequired }
        if let violation = passwordPolicy.violation(newPassword, email: EmailAddress(user.email)) {
            throw CommonFailure.invalidFields([
                FieldProblem(name: "new_password", reason: passwordPolicy.explain(violation), violation: violation)
            ])
        }
        let hash = try hashing.hash(PasswordPolicy.normalize(newPassword))
        let purpose = Purpose.passwordReset(resetHash: holder.hash)
        let finish = { (db: any SQLConnection) throws -> Result<Int, any Error> in
            guard try PasswordResetCodes.spend(hash: holder.hash, now: now.millis, on: db) else {
                return .failure(PasswordResetFailure.invalidCredential)
            }
            // Disabled since the first look (its resets are deleted then, but a reset may have been mid-flight): the same dead credential.
            guard try AccountRepository.find(id: user.id, on: db)?.disabledAt == nil else {
                return .failure(PasswordResetFailure.invalidCredential)
            }
            // A factor enrolled since the reset began (by whoever held a session) needed its proof.
            if !hasFactors, !(try FactorRepository.list(user.id, on: db)).isEmpty {
                return .failure(SecondFactorFailure.secondFactorRequired)
            }
            try AccountRepository.setPasswordHash(user.id, hash, on: db)
            // Now the code's proof of the address counts: it is the owner's account.
            try AccountRepository.markEmailVerified(user.id, at: now.millis, on: db)
            // Every session, what relying parties were given (offline grants included: a phished sign-in stops
            // here), and sign-ins and pushes started with the old password.
            let ended = try AccountLockdown.endEverything(
                of: user.id, reason: .passwordReset, hooks: endHooks, now: now.millis, on: db)
            try LoginThrottle.forgetPassword(email: user.email, on: db)
            try outbox.enqueueEmail(
                "password_reset_done", to: user.email, language: outbox.texts.language(locale: nil, user: user.locale),
                values: client.branded(["sessions": .number(ended)]), now: now.millis, on: db)
            try AuditLog.append(
                client.event(.passwordReset, .success, userID: user.id, detail: "sessions ended=\(ended)"),
                at: now.millis, on: db)
            return .success(ended)
        }
        switch (hasFactors, factorID, answer) {
        case (false, _, _):
            try transactions.write { try finish($0).get() }
        case (true, let factorID?, .proof(let proof)?):
            try secondFactors.prove(
                proof, client: client, now: now,
                resolve: { db in
                    (try SecondFactorService.factor(factorID, of: user.id, on: db), user.id, purpose)
                },
                onExhausted: { db, _ in
                    // The reset's budget of wrong proofs is spent: it ends; ask for a new code.
                    _ = try PasswordResetCodes.spend(hash: holder.hash, now: now.millis, on: db)
                }, then: { db, _ in try finish(db).map { _ in () } })
        case (true, let factorID?, .approval(let approvalID)?):
            // A device's approval is single use and signed by the device: no attempt to count.
            let outcome = try transactions.write { db -> Result<Int, any Error> in
                let factor = try SecondFactorService.factor(factorID, of: user.id, on: db)
                guard factor.kind == .device else { return .failure(SecondFactorFailure.unusable) }
                if let frozen = try SecondFactorService.frozenApproval(user.id, client: client, now: now.millis, on: db)
                {
                    return .failure(frozen)
                }
                let approved = try push.consume(approvalID, factor: factor, purpose: purpose, now: now.millis, on: db)
                try AuditLog.append(
                    client.event(
                        approved ? .mfaSucceeded : .mfaFailed, approved ? .success : .failure, userID: user.id,
                        detail:
                            "kind=device push approval=\(approvalID.raw) purpose=reset \(SecondFactorService.boundDetail(factor))"
                    ),
                    at: now.millis, on: db)
                guard approved else { return .failure(SecondFactorFailure.invalidCode) }
                try FactorRepository.markUsed(factor.id, at: now.millis, on: db)
                return try finish(db)
            }
            _ = try outcome.get()
        case (true, _, _):
            throw SecondFactorFailure.secondFactorRequired
        }
        changes.publish("user:\(user.id.raw)")
    }
}

/// The password reset's own refusal.
enum PasswordResetFailure: Error, Equatable {
    /// The reset credential is unknown, expired, or was used.
    case invalidCredential
}
