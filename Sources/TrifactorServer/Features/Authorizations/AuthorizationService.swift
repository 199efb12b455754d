import API
import Core
import Crypto
import Foundation
import Store

/// Bound actions (transaction signing, PSD2 dynamic linking): an action is
/// described first; the server keeps the SHA-256 of its canonical form and
/// sends a challenge that states it; a proof for that authorization approves
/// that exact action once, within 5 minutes. Endpoints that move money call
/// `consume` with their own request's action.
struct AuthorizationService: Sendable {
    static let lifetime: Int64 = 5 * 60_000

    let transactions: Transactions
    let clock: Clock
    let random: RandomSource
    let secondFactors: SecondFactorService

    /// An authorization waiting for its proof.
    struct Created: Sendable {
        let id: AuthorizationID
        let summary: String
        let actionHash: String
        let challenge: ChallengeIssued
        /// For a device asked with `push`: the approval it shows, and the number to show beside it; nil when the
        /// user's devices had their pushes for now (3 in 10 minutes).
        var pushed: PushService.Created?
    }

    /// Describes `action` and sends the challenge of the caller's factor `factorID` for it; for a device and a
    /// `push` message (who asks), also pushes the action to the device, which shows it and signs its hash.
    /// - Throws: `AuthorizationFailure.unverifiedEmail`, `CommonFailure.invalidFields`, `SecondFactorFailure.factorNotFound`.
    func create(
        _ action: [String: JSONScalar], factorID: FactorID, by caller: Caller, client: AuditContext,
        push message: String? = nil
    ) throws -> Created {
        guard caller.user.emailVerifiedAt != nil else { throw AuthorizationFailure.unverifiedEmail }
        guard Self.isValid(action) else {
            throw CommonFailure.invalid(
                "action",
                "must be an object with a type and at most 20 fields named [a-z0-9_], with values of at most 200 characters and no control characters"
            )
        }
        let now = clock.now()
        let id = AuthorizationID.random(using: random)
        let hash = Self.canonicalHash(action)
        let summary = Self.summary(action)
        let factor = try transactions.write { db -> Factor in
            let factor = try SecondFactorService.factor(factorID, of: caller.user.id, on: db)
            try AuthorizationRepository.insert(
                id, userID: caller.user.id, factorID: factor.id, actionHash: hash, summary: summary, now: now.millis,
                expiresAt: now.millis + Self.lifetime, on: db)
            try AuditLog.append(
                client.event(
                    .authorizationCreated, .success, userID: caller.user.id, detail: "id=\(id.raw) \(summary)"),
                at: now.millis, on: db)
            return factor
        }
        let challenge = try secondFactors.send(
            factor, purpose: .authorization(id, actionHash: hash), intent: .bound(action), client: client, now: now)
        return Created(
            id: id, summary: summary, actionHash: hash, challenge: challenge,
            pushed: try pushed(factor, id, action, hash, message, client, now))
    }

    /// The push of `action` to the device `factor`, when asked with a message.
    private func pushed(
        _ factor: Factor, _ id: AuthorizationID, _ action: [String: JSONScalar], _ hash: String, _ message: String?,
        _ client: AuditContext, _ now: Date
    ) throws -> PushService.Created? {
        guard let message, factor.kind == .device else { return nil }
        // One push at a time for an approval: an earlier one still waiting (sent again after it expired on the page's
        // side) is withdrawn, so the device never shows two numbers for one payment.
        try transactions.write {
            try PushRepository.denyPending(for: .authorization(id, actionHash: hash), now: now.millis, on: $0)
        }
        return try secondFactors.push.create(
            for: factor, purpose: .authorization(id, actionHash: hash), message: message, action: action,
            client: client, now: now)
    }

    /// Sends the challenge of the caller's pending authorization `id` again ("Send a new code"), for the same action,
    /// described again by the caller. The purpose is the same, so the code sent before stops working (one running code
    /// per number and purpose) and the wrong codes counted so far still count: asking again buys no guesses (NIST SP
    /// 800-63B §5.2.2). A different action voids the authorization, as `consume` does.
    /// - Throws: `AuthorizationFailure.notFound` (unknown, approved, void, expired), `.mismatch` (now void).
    func resend(
        _ id: AuthorizationID, action: [String: JSONScalar], by caller: Caller, client: AuditContext,
        push message: String? = nil
    ) throws -> Created {
        let now = clock.now()
        let hash = Self.canonicalHash(action)
        let found = try transactions.write { db -> Result<(Factor, String), AuthorizationFailure> in
            guard let pending = try AuthorizationRepository.pending(id, userID: caller.user.id, now: now.millis, on: db)
            else { return .failure(.notFound) }
            guard pending.actionHash == hash else {
                try AuthorizationRepository.void(id, whileIn: .pending, on: db)
                try AuditLog.append(
                    client.event(
                        .authorizationFailed, .denied, userID: caller.user.id,
                        detail: "id=\(id.raw) resend for another action"),
                    at: now.millis, on: db)
                return .failure(.mismatch)
            }
            try AuditLog.append(
                client.event(.authorizationResent, .success, userID: caller.user.id, detail: "id=\(id.raw)"),
                at: now.millis, on: db)
            return .success(
                (try SecondFactorService.factor(pending.factorID, of: caller.user.id, on: db), pending.summary))
        }
        let (factor, summary) = try found.get()
        let challenge = try secondFactors.send(
            factor, purpose: .authorization(id, actionHash: hash), intent: .bound(action), client: client, now: now)
        return Created(
            id: id, summary: summary, actionHash: hash, challenge: challenge,
            pushed: try pushed(factor, id, action, hash, message, client, now))
    }

    /// The state of the push `approval` of the caller's authorization `id` for `action`: `pending`, `approved`,
    /// `denied` or `expired` (also for an approval of another authorization, or none).
    func pushState(_ approval: ApprovalID, of id: AuthorizationID, action: [String: JSONScalar]) throws -> String {
        let now = clock.now().millis
        guard
            let (status, expiresAt) = try transactions.read({
                try PushRepository.state(
                    approval, purpose: .authorization(id, actionHash: Self.canonicalHash(action)), on: $0)
            })
        else { return "expired" }
        if status == .pending && expiresAt <= now { return "expired" }
        return status.rawValue
    }

    /// Approves the caller's authorization `id` with the push `approval` its device approved (which signed the
    /// action's hash): the approval is spent in the same transaction. A device's approval counts no attempt.
    /// - Throws: `AuthorizationFailure.notFound`, `SecondFactorFailure.invalidCode` (not approved, spent, another
    ///   authorization's), `.frozen`, `.unusable` (not a device).
    func approve(_ id: AuthorizationID, approval: ApprovalID, by caller: Caller, client: AuditContext) throws {
        let now = clock.now().millis
        let outcome = try transactions.write { db -> Result<Void, any Error> in
            guard let pending = try AuthorizationRepository.pending(id, userID: caller.user.id, now: now, on: db)
            else { return .failure(AuthorizationFailure.notFound) }
            let factor = try SecondFactorService.factor(pending.factorID, of: caller.user.id, on: db)
            guard factor.kind == .device else { return .failure(SecondFactorFailure.unusable) }
            if let frozen = try SecondFactorService.frozenApproval(caller.user.id, client: client, now: now, on: db) {
                return .failure(frozen)
            }
            let approved = try secondFactors.push.consume(
                approval, factor: factor, purpose: .authorization(id, actionHash: pending.actionHash), now: now, on: db)
            guard approved else {
                try AuditLog.append(
                    client.event(
                        .authorizationFailed, .failure, userID: caller.user.id,
                        detail: "id=\(id.raw) push approval=\(approval.raw) not approved"),
                    at: now, on: db)
                return .failure(SecondFactorFailure.invalidCode)
            }
            guard try AuthorizationRepository.approve(id, now: now, lifetime: Self.lifetime, on: db) else {
                return .failure(AuthorizationFailure.notFound)
            }
            try FactorRepository.markUsed(factor.id, at: now, on: db)
            try AuditLog.append(
                client.event(
                    .authorizationApproved, .success, userID: caller.user.id,
                    detail:
                        "id=\(id.raw) kind=device push approval=\(approval.raw) \(SecondFactorService.boundDetail(factor))"
                ),
                at: now, on: db)
            return .success(())
        }
        try outcome.get()
    }

    /// Ends the pending authorization `id` for `action` (the page that asked for it was cancelled): it can no longer
    /// be approved, and a push for it still waiting on the device is denied, so the device stops showing it.
    func withdraw(_ id: AuthorizationID, action: [String: JSONScalar]) throws {
        let now = clock.now().millis
        try transactions.write { db in
            guard try AuthorizationRepository.void(id, whileIn: .pending, on: db) else { return }
            try PushRepository.denyPending(
                for: .authorization(id, actionHash: Self.canonicalHash(action)), now: now, on: db)
        }
    }

    /// Approves authorization `id` of the caller with a proof of its factor.
    /// - Throws: `AuthorizationFailure.notFound`, `SecondFactorFailure.invalidCode`, `.locked`.
    func approve(_ id: AuthorizationID, proof: Proof, by caller: Caller, client: AuditContext) throws {
        let now = clock.now()
        try secondFactors.prove(
            proof, client: client, now: now,
            resolve: { db in
                guard
                    let pending = try AuthorizationRepository.pending(
                        id, userID: caller.user.id, now: now.millis, on: db)
                else {
                    throw AuthorizationFailure.notFound
                }
                return (
                    try SecondFactorService.factor(pending.factorID, of: caller.user.id, on: db), caller.user.id,
                    .authorization(id, actionHash: pending.actionHash)
                )
            },
            onFailure: { db in
                try AuditLog.append(
                    client.event(.authorizationFailed, .failure, userID: caller.user.id, detail: "id=\(id.raw)"),
                    at: now.millis, on: db)
            },
            onExhausted: { db, _ in
                // The transfer's budget of wrong codes is spent: this authorization ends; describe the action again for a new one.
                try AuthorizationRepository.void(id, whileIn: .pending, on: db)
            },
            then: { db, _ -> Result<Void, any Error> in
                guard try AuthorizationRepository.approve(id, now: now.millis, lifetime: Self.lifetime, on: db) else {
                    return .failure(AuthorizationFailure.notFound)
                }
                try AuditLog.append(
                    client.event(.authorizationApproved, .success, userID: caller.user.id, detail: "id=\(id.raw)"),
                    at: now.millis, on: db)
                return .success(())
            })
    }

    /// Spends the caller's approved authorization `id` for `action`, for a
    /// relying party that moves money in its own database (a bank calling
    /// with its customer's session): once, for exactly that action.
    /// - Throws: `AuthorizationFailure.notFound` (unknown, unapproved, expired, used), `.mismatch` (now void).
    func consume(_ id: AuthorizationID, action: [String: JSONScalar], by caller: Caller) throws {
        let now = clock.now().millis
        let outcome = try transactions.write {
            try Self.consume(id, userID: caller.user.id, action: action, now: now, on: $0)
        }
        switch outcome {
        case .used: return
        case .notFound: throw AuthorizationFailure.notFound
        case .mismatch: throw AuthorizationFailure.mismatch
        }
    }

    /// The outcome of spending an authorization.
    enum Consumption: Equatable {
        case used
        /// Unknown, unapproved, expired or already used.
        case notFound
        /// The action differs from the approved one: the authorization is now void.
        case mismatch
    }

    /// Spends an approved authorization for `action`, which must be the very
    /// action that was approved; any difference voids the authorization.
    /// Returns rather than throws, so the caller commits the void and the
    /// audit entry before answering.
    static func consume(
        _ id: AuthorizationID, userID: UserID, action: [String: JSONScalar], now: Int64, on db: any SQLConnection
    ) throws -> Consumption {
        guard let approved = try AuthorizationRepository.approvedHash(id, userID: userID, now: now, on: db) else {
            return .notFound
        }
        guard ConstantTime.equals(approved, canonicalHash(action)) else {
            guard try AuthorizationRepository.void(id, whileIn: .approved, on: db) else { return .notFound }
            try AuditLog.append(
                AuditEvent(
                    kind: .authorizationFailed, outcome: .denied, userID: userID.raw,
                    detail: "id=\(id.raw) action changed"), at: now, on: db)
            return .mismatch
        }
        guard try AuthorizationRepository.use(id, now: now, on: db) else { return .notFound }
        try AuditLog.append(
            AuditEvent(kind: .authorizationUsed, outcome: .success, userID: userID.raw, detail: "id=\(id.raw)"),
            at: now, on: db)
        return .used
    }

    // MARK: The rules of bound actions

    /// Field names are `[a-z0-9_]{1,40}`; string values have no control
    /// characters (they are read out in messages) and at most 200 characters.
    static func isValid(_ action: [String: JSONScalar]) -> Bool {
        guard case .string(let type)? = action["type"], !type.isEmpty, action.count <= 20 else { return false }
        return action.allSatisfy { key, value in
            (1...40).contains(key.count)
                && key.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
                && value.text.count <= 200
                && !value.text.unicodeScalars.contains { $0.properties.generalCategory == .control }
        }
    }

    /// SHA-256 over an unambiguous canonical form (`CanonicalAction.form`, which devices recompute).
    static func canonicalHash(_ action: [String: JSONScalar]) -> String {
        SHA256.hex(CanonicalAction.form(action))
    }

    /// "Confirm transfer of EUR 250.00 to Alice Example", or "Confirm <type>".
    static func summary(_ action: [String: JSONScalar]) -> String {
        let type = action["type"]?.text ?? "action"
        if type == "transfer", let amount = action["amount"]?.text, let payee = action["payee"]?.text {
            return "Confirm transfer of \(action["currency"]?.text ?? "") \(amount) to \(payee)".replacingOccurrences(
                of: "  ", with: " ")
        }
        return "Confirm \(type)"
    }
}

/// Refusals of bound actions.
enum AuthorizationFailure: Error, Equatable {
    /// Unknown, expired, used, or another user's.
    case notFound
    /// The action differs from the approved one (the authorization is void).
    case mismatch
    /// A bound action needs a verified email.
    case unverifiedEmail
}
