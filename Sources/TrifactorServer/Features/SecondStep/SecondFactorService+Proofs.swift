import API
import Core
import Crypto
import Foundation
import Store

/// Shared by sign-in, step-up, authorizations and password resets: a
/// factor's challenge sent and audited, a proof checked with its attempt
/// counted first, and what ends a purpose or freezes the second step.
extension SecondFactorService {
    /// For the audit line of a device's proof: whether its approval key signed it, and what released that key.
    static func boundDetail(_ factor: Factor) -> String {
        guard case .device(let keys) = factor.credential else { return "" }
        return keys.approval.map { "approval_key=\($0.gate.rawValue)" } ?? "approval_key=none"
    }

    /// The hundredth wrong proof in a row: the second step is locked until an
    /// administrator resets the factors, and the owner is told.
    func freeze(_ userID: UserID, client: AuditContext, now: Int64, on db: any SQLConnection) throws {
        try AuditLog.append(
            client.event(.mfaFrozen, .denied, userID: userID, detail: "\(lockout.ceiling ?? 0) wrong proofs in a row"),
            at: now, on: db)
        guard let user = try AccountRepository.find(id: userID, on: db) else { return }
        try issuer.outbox?.enqueueEmail(
            "mfa_frozen", to: user.email,
            language: issuer.outbox?.texts.language(locale: nil, user: user.locale) ?? "en",
            values: client.branded([:]), now: now, on: db)
    }

    /// Ends a sign-in (its pending credential is spent) or a step-up's
    /// session whose budget of wrong proofs is spent.
    static func end(purpose db: any SQLConnection, _ purpose: Purpose, now: Int64) throws {
        switch purpose {
        case .signIn(let hash): _ = try PendingSignInRepository.usePending(tokenHash: hash, now: now, on: db)
        case .stepUp(let session): _ = try SessionRepository.end(session, at: now, reason: .attemptsExhausted, on: db)
        case .authorization, .passwordReset, .backchannel: break
        }
    }

    /// Refuses while `userID`'s second step is frozen: no challenge is sent, no call placed.
    /// - Throws: `SecondFactorFailure.frozen`.
    static func refuseFrozen(_ userID: UserID, on db: any SQLConnection) throws {
        if try LoginThrottle.isFrozen(secondFactorOf: userID, on: db) { throw SecondFactorFailure.frozen }
    }

    /// For a push approval, which counts no attempt: `.frozen` (audited, the approval left unspent) while
    /// `userID`'s second step is frozen, so an approved push cannot pass what a code no longer can; nil otherwise.
    static func frozenApproval(_ userID: UserID, client: AuditContext, now: Int64, on db: any SQLConnection) throws
        -> SecondFactorFailure?
    {
        guard try LoginThrottle.isFrozen(secondFactorOf: userID, on: db) else { return nil }
        try AuditLog.append(
            client.event(.mfaLocked, .denied, userID: userID, detail: "frozen: push approval refused"), at: now, on: db)
        return .frozen
    }

    /// One of `userID`'s factors. - Throws: `SecondFactorFailure.factorNotFound`.
    static func factor(_ id: FactorID, of userID: UserID, on db: any SQLConnection) throws -> Factor {
        guard let factor = try FactorRepository.find(id, userID: userID, on: db) else {
            throw SecondFactorFailure.factorNotFound
        }
        return factor
    }

    /// A pending sign-in whose password was proven (a passwordless push's pending credential never reaches this second step).
    static func passwordPending(_ credential: String, now: Int64, on db: any SQLConnection) throws -> PendingSignIn {
        guard SessionToken.isWellFormed(credential),
            let pending = try PendingSignInRepository.pending(tokenHash: SHA256.hex(credential), now: now, on: db),
            pending.passwordVerifiedAt != nil
        else { throw SecondFactorFailure.invalidPendingCredential }
        return pending
    }

    /// Sends the challenge of `factor` for `purpose`, and audits it; nothing while the user's second step is frozen.
    /// - Throws: `SecondFactorFailure.frozen`, the strategy's refusals.
    func send(_ factor: Factor, purpose: Purpose, intent: CodeIntent, client: AuditContext, now: Date) throws
        -> ChallengeIssued
    {
        var failure: (any Error)?
        var issued = ChallengeIssued.none
        do {
            try transactions.read { try Self.refuseFrozen(factor.userID, on: $0) }
            issued = try factors.strategy(factor.kind).challenge(
                factor, purpose: purpose, intent: intent, client: client, now: now)
        } catch { failure = error }
        let outcome = failure.map { "not sent: \(String(describing: $0).prefix(60))" } ?? "sent"
        try transactions.write { db in
            try AuditLog.append(
                client.event(
                    .mfaChallengeSent, failure == nil ? .success : .failure, userID: factor.userID,
                    detail: "kind=\(factor.kind.rawValue) \(outcome)"), at: now.millis, on: db)
        }
        if let failure { throw failure }
        return issued
    }

    /// Wrong proofs one purpose (a pending sign-in, a step-up of a session,
    /// an authorization, a password reset) may have: the last one ends it.
    static let attemptsPerPurpose = 5

    /// Proves a factor with `proof` in two transactions, under two budgets:
    /// the purpose's own (`attemptsPerPurpose`: the last wrong proof ends what
    /// was being confirmed, through `onExhausted`) and the user's across
    /// every flow (the lockout: consecutive wrong proofs lock for a growing
    /// delay). A proof of the wrong shape for its factor is refused before
    /// either counts. In the first transaction, `resolve` finds the factor,
    /// whose it is and the purpose, and the attempt is counted and committed.
    /// In the second the proof is checked and spent, and on success both
    /// counts clear and `then` runs, all committed together (a failure `then`
    /// returns is committed too, with the proof spent; so is a wrong proof's
    /// audit row and `onFailure`'s writes).
    /// - Parameter onExhausted: ends the purpose when its budget is spent;
    ///   nil: a sign-in's pending credential is spent, a step-up's session
    ///   ends (other purposes pass their own).
    /// - Throws: `CommonFailure.invalidFields` (`code` of the wrong shape),
    ///   `SecondFactorFailure.locked` while locked, `.frozen` while frozen
    ///   and for the wrong proof that freezes (the policy's ceiling),
    ///   `.wrongProof` for a wrong proof (with the tries left), `.exhausted`
    ///   for the purpose's last, what `resolve` throws, or what `then` returned.
    @discardableResult
    func prove<T>(
        _ proof: Proof, client: AuditContext, now: Date,
        resolve: (any SQLConnection) throws -> (Factor, UserID, Purpose),
        onFailure: (any SQLConnection) throws -> Void = { _ in },
        onExhausted: ((any SQLConnection, Purpose) throws -> Void)? = nil,
        then: (any SQLConnection, Factor) throws -> Result<T, any Error>
    ) throws -> T {
        let throttle = LoginThrottle(policy: lockout)
        let exhaust = onExhausted ?? { try Self.end(purpose: $0, $1, now: now.millis) }
        let (factor, userID, purpose, admission, attempt) = try transactions.write {
            db -> (Factor, UserID, Purpose, LoginThrottle.Admission, Int) in
            let (factor, userID, purpose) = try resolve(db)
            if let reason = factors.strategy(factor.kind).malformed(proof, of: factor) {
                throw CommonFailure.invalid("code", reason)
            }
            let admission = try throttle.admit(secondFactorOf: userID, nowMillis: now.millis, on: db)
            switch admission {
            case .locked: try AuditLog.append(client.event(.mfaLocked, .denied, userID: userID), at: now.millis, on: db)
            case .frozen:
                try AuditLog.append(
                    client.event(.mfaLocked, .denied, userID: userID, detail: "frozen"), at: now.millis, on: db)
            case .admitted: break
            }
            guard case .admitted = admission else { return (factor, userID, purpose, admission, 0) }
            return (factor, userID, purpose, admission, try PurposeAttempts.count(purpose, now: now.millis, on: db))
        }
        switch admission {
        case .locked(let wait): throw SecondFactorFailure.locked(retryAfter: wait)
        case .frozen: throw SecondFactorFailure.frozen
        case .admitted: break
        }
        let strategy = factors.strategy(factor.kind)
        let detail = "kind=\(factor.kind.rawValue) purpose=\(purpose.label)"
        // The attempt that reached the ceiling froze the second step when it was counted: it answers so, however it fails.
        let freezes =
            if case .admitted(let consecutive) = admission { lockout.freezes(afterFailures: consecutive) } else {
                false
            }
        // Past the purpose's budget (parallel proofs each counted first), nothing is checked: it ends.
        guard attempt <= Self.attemptsPerPurpose else {
            try transactions.write { db in
                try exhaust(db, purpose)
                try AuditLog.append(
                    client.event(.mfaExhausted, .denied, userID: userID, detail: detail), at: now.millis, on: db)
                if freezes { try freeze(userID, client: client, now: now.millis, on: db) }
            }
            throw freezes ? SecondFactorFailure.frozen : SecondFactorFailure.exhausted
        }
        let outcome = try transactions.write { db -> Result<T, any Error> in
            guard try strategy.verify(factor, proof: proof, purpose: purpose, client: client, now: now, on: db) else {
                try AuditLog.append(
                    client.event(.mfaFailed, .failure, userID: userID, detail: detail), at: now.millis, on: db)
                try onFailure(db)
                if freezes { try freeze(userID, client: client, now: now.millis, on: db) }
                let purposeLeft = Self.attemptsPerPurpose - attempt
                guard purposeLeft > 0 else {
                    try exhaust(db, purpose)
                    try AuditLog.append(
                        client.event(.mfaExhausted, .denied, userID: userID, detail: detail), at: now.millis, on: db)
                    return .failure(freezes ? SecondFactorFailure.frozen : SecondFactorFailure.exhausted)
                }
                // The freezing proof says so; otherwise the tries left are this flow's own (the account's lock answers with its wait when it applies).
                return .failure(
                    freezes ? SecondFactorFailure.frozen : SecondFactorFailure.wrongProof(remaining: purposeLeft))
            }
            try PurposeAttempts.clear(purpose, on: db)
            try throttle.reset(secondFactorOf: userID, on: db)
            try FactorRepository.markUsed(factor.id, at: now.millis, on: db)
            try AuditLog.append(
                client.event(.mfaSucceeded, .success, userID: userID, detail: detail), at: now.millis, on: db)
            return try then(db, factor)
        }
        return try outcome.get()
    }
}
