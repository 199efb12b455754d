import API
import Core
import Crypto
import Foundation
import Phone
import Store

/// Proving a second factor: the sign-in's second step, step-up on a live
/// session, and (through `prove`) bound actions. The attempt is counted per
/// user and committed before the check (10 free, then a lockout doubling to
/// 15 minutes); then one transaction checks the proof, spends what it used,
/// and commits the outcome with everything that follows from it (the
/// session, the approval, the audit rows). Codes are bound to their purpose.
struct SecondFactorService: Sendable {
    let transactions: Transactions
    let clock: Clock
    let random: RandomSource
    let factors: SecondFactors
    let lockout: LockoutPolicy
    let issuer: SessionIssuer
    let push: PushService
    let policies: SessionPolicies
    let changes: ChangeFeed

    /// How a second step is answered.
    enum Answer: Sendable {
        case proof(Proof)
        /// A push the device approved.
        case approval(ApprovalID)
    }

    // MARK: Sign-in

    /// The factors a user can prove after the password: every standalone
    /// factor, and recovery codes while some are unused.
    func hints(_ userID: UserID, on db: any SQLConnection) throws -> [SessionService.Hint] {
        try FactorRepository.list(userID, on: db).compactMap { f in
            if f.kind == .recoveryCode {
                return try RecoveryCodeRepository.hasUnused(f.id, on: db)
                    ? SessionService.Hint(factorID: f.id, kind: f.kind, displayName: nil, maskedPhone: nil) : nil
            }
            return SessionService.Hint(
                factorID: f.id, kind: f.kind, displayName: f.displayName, maskedPhone: f.credential.phone?.masked)
        }
    }

    /// Starts the second step of a password sign-in; returns its credential (shown once, stored hashed) and when it expires.
    func startPending(_ userID: UserID, passwordVerifiedAt: Int64, now: Int64, on db: any SQLConnection) throws -> (
        credential: String, expiresAt: Int64
    ) {
        let credential = SessionToken.generate(random)
        let expiresAt = try PendingSignInRepository.insertPending(
            tokenHash: SHA256.hex(credential), userID: userID, passwordVerifiedAt: passwordVerifiedAt,
            now: now, on: db)
        return (credential, expiresAt)
    }

    /// Sends (or issues) the challenge of a sign-in's factor; for a device, also pushes it with a number to match.
    /// - Throws: `SecondFactorFailure.invalidPendingCredential`, `.factorNotFound`, the strategy's refusals.
    func signInChallenge(pendingCredential: String, factorID: FactorID, client: AuditContext) throws -> (
        ChallengeIssued, push: PushService.Created?
    ) {
        let now = clock.now()
        let (pending, factor) = try transactions.read { db in
            let pending = try Self.passwordPending(pendingCredential, now: now.millis, on: db)
            return (pending, try Self.factor(factorID, of: pending.userID, on: db))
        }
        RequestTransaction.current?.attribute(to: pending.userID)
        let purpose = Purpose.signIn(pendingHash: pending.tokenHash)
        let issued = try send(factor, purpose: purpose, intent: .code, client: client, now: now)
        let pushed =
            factor.kind == .device ? try push.create(for: factor, purpose: purpose, client: client, now: now) : nil
        return (issued, pushed)
    }

    /// "Call me instead" for a phone challenge of this sign-in: the code is spoken by a voice call now.
    /// - Throws: `SecondFactorFailure.invalidPendingCredential`, `.factorNotFound`, `.unusable` (not a phone, or no text sent yet).
    func callInstead(pendingCredential: String, factorID: FactorID, client: AuditContext) throws {
        let now = clock.now()
        let (pending, factor) = try transactions.read { db in
            let pending = try Self.passwordPending(pendingCredential, now: now.millis, on: db)
            let factor = try Self.factor(factorID, of: pending.userID, on: db)
            try Self.refuseFrozen(pending.userID, on: db)
            return (pending, factor)
        }
        RequestTransaction.current?.attribute(to: pending.userID)
        guard factor.kind == .phone else { throw SecondFactorFailure.unusable }
        try factors.phone.callNow(factor, purpose: .signIn(pendingHash: pending.tokenHash), client: client)
    }

    /// Completes a password sign-in with its second factor: a session at AAL2.
    /// - Throws: `SecondFactorFailure.invalidCode`, `.locked`, `.invalidPendingCredential`, `.factorNotFound`.
    func completeSignIn(pendingCredential: String, factorID: FactorID, answer: Answer, client: AuditContext) throws -> (
        token: String, session: SessionRecord
    ) {
        let now = clock.now()
        guard SessionToken.isWellFormed(pendingCredential) else { throw SecondFactorFailure.invalidPendingCredential }
        let tokenHash = SHA256.hex(pendingCredential)
        let purpose = Purpose.signIn(pendingHash: tokenHash)
        // In the proof's transaction: the pending sign-in is spent (once) and the session issued.
        let issue = {
            (db: any SQLConnection, pending: PendingSignIn, factor: Factor)
                throws -> Result<(token: String, session: SessionRecord), any Error> in
            // The account's row first, as every account-wide change takes it (`AccountLockdown`): a lockdown that
            // committed meanwhile ended this pending sign-in, and one that comes after sees this session.
            try AccountRepository.lock(pending.userID, on: db)
            guard try PendingSignInRepository.usePending(tokenHash: tokenHash, now: now.millis, on: db) else {
                return .failure(SecondFactorFailure.invalidPendingCredential)
            }
            let proofs = SessionIssuer.Proofs(
                aal: .aal2, methods: [.pwd] + factor.methods, passwordVerifiedAt: pending.passwordVerifiedAt,
                secondFactor: true,
                deviceID: factor.kind == .device ? factor.id : nil)
            return .success(
                try issuer.issue(
                    userID: pending.userID, proofs, client: client, detail: "factor=\(factor.id.raw)", now: now.millis,
                    on: db))
        }
        switch answer {
        case .proof(let proof):
            var pending: PendingSignIn?
            return try prove(
                proof, client: client, now: now,
                resolve: { db in
                    let p = try Self.passwordPending(pendingCredential, now: now.millis, on: db)
                    // The account's row before the factor's (what the proof updates), in the order a removal takes.
                    try AccountRepository.lock(p.userID, on: db)
                    pending = p
                    return (try Self.factor(factorID, of: p.userID, on: db), p.userID, purpose)
                },
                then: { db, factor in
                    guard let pending else { return .failure(SecondFactorFailure.invalidPendingCredential) }
                    return try issue(db, pending, factor)
                })
        case .approval(let approvalID):
            // A device's approval is single use and signed by the device: no attempt to count.
            let outcome = try transactions.write { db -> Result<(token: String, session: SessionRecord), any Error> in
                let pending = try Self.passwordPending(pendingCredential, now: now.millis, on: db)
                try AccountRepository.lock(pending.userID, on: db)
                let factor = try Self.factor(factorID, of: pending.userID, on: db)
                guard factor.kind == .device else { return .failure(SecondFactorFailure.unusable) }
                if let frozen = try Self.frozenApproval(pending.userID, client: client, now: now.millis, on: db) {
                    return .failure(frozen)
                }
                let approved = try push.consume(approvalID, factor: factor, purpose: purpose, now: now.millis, on: db)
                try AuditLog.append(
                    client.event(
                        approved ? .mfaSucceeded : .mfaFailed, approved ? .success : .failure, userID: pending.userID,
                        detail: "kind=device push approval=\(approvalID.raw) \(Self.boundDetail(factor))"),
                    at: now.millis, on: db)
                guard approved else { return .failure(SecondFactorFailure.invalidCode) }
                try FactorRepository.markUsed(factor.id, at: now.millis, on: db)
                return try issue(db, pending, factor)
            }
            return try outcome.get()
        }
    }

    // MARK: Step-up

    /// Sends (or issues) a step-up challenge for one of the caller's factors.
    func stepUpChallenge(_ caller: Caller, factorID: FactorID, client: AuditContext) throws -> ChallengeIssued {
        let now = clock.now()
        let factor = try transactions.read { try Self.factor(factorID, of: caller.user.id, on: $0) }
        return try send(factor, purpose: .stepUp(caller.session.id), intent: .code, client: client, now: now)
    }

    /// Raises the caller's session to AAL2 with a proof of one of their factors.
    /// - Throws: `SecondFactorFailure.reauthenticationRequired` for a session
    ///   older than an AAL2 session may live, `.invalidCode`, `.locked`.
    func stepUp(_ caller: Caller, factorID: FactorID, proof: Proof, client: AuditContext) throws -> SessionRecord {
        let now = clock.now()
        // An AAL2 session lives 24 hours at most: an older one cannot be raised, only replaced.
        guard Date(millis: caller.session.createdAt).addingTimeInterval(policies.aal2.absoluteLifetime) > now else {
            throw SecondFactorFailure.reauthenticationRequired
        }
        let methods: [AuthMethod]
        do {
            methods = try prove(
                proof, client: client, now: now,
                resolve: { db in
                    (try Self.factor(factorID, of: caller.user.id, on: db), caller.user.id, .stepUp(caller.session.id))
                },
                then: { db, factor -> Result<[AuthMethod], any Error> in
                    let methods = factor.methods
                    guard try SessionRepository.stepUp(caller.session.id, methods: methods, at: now.millis, on: db)
                    else { return .failure(CommonFailure.unauthenticated) }
                    try AuditLog.append(
                        client.event(
                            .sessionSteppedUp, .success, userID: caller.user.id,
                            detail: "method=\(methods.map(\.rawValue).joined(separator: "+"))"), at: now.millis, on: db)
                    return .success(methods)
                })
        } catch let failure as SecondFactorFailure where failure == .exhausted || failure == .frozen {
            // The session may have ended with the budget: every copy of it forgets it now.
            changes.publish("session:\(caller.session.id.raw)")
            throw failure
        }
        changes.publish("session:\(caller.session.id.raw)")
        var raised = caller.session
        raised.aal = .aal2
        for method in methods where !raised.methods.contains(method) { raised.methods.append(method) }
        raised.mfaVerifiedAt = now.millis
        raised.lastSeenAt = now.millis
        return raised
    }
}
