import API
import Core
import Crypto
import Foundation
import Store

/// Enrolling, listing and removing second factors, and recovery codes.
/// Enrolling needs a verified email and a fresh proof: the password for a
/// first factor, a second factor once there is one (else a stolen password
/// could add the thief's phone). Removing needs a fresh second factor. At
/// most 10 factors; an enrollment session allows 5 attempts in 10 minutes.
struct EnrollmentService: Sendable {
    static let maxFactors = 10

    let transactions: Transactions
    let clock: Clock
    let random: RandomSource
    let factors: SecondFactors
    /// How recent the proof must be, in seconds.
    let reauthenticationWindow: TimeInterval
    let changes: ChangeFeed

    /// Starts enrolling a factor of `request.kind`; returns what the client
    /// needs and the enrollment session (shown once, stored hashed).
    /// - Throws: `SecondFactorFailure` (`.unverifiedEmail`, `.reauthenticationRequired`,
    ///   `.secondFactorRequired`, `.limitExceeded`, `.exists`, …), `CommonFailure.invalidFields`.
    func begin(_ request: StartEnrollmentRequest, by caller: Caller, client: AuditContext) throws -> (
        offer: EnrollmentOffer, session: String
    ) {
        let now = clock.now()
        let enrolled = try transactions.read { try FactorRepository.list(caller.user.id, on: $0) }
        try requireFreshProof(caller, enrolled: enrolled, now: now)
        guard let kind = Factor.Kind(request.kind), kind.isEnrollable else {
            throw CommonFailure.invalid("kind", "must be phone, totp, device or passkey")
        }
        guard enrolled.filter(\.kind.isStandalone).count < Self.maxFactors else {
            throw SecondFactorFailure.limitExceeded
        }
        let factorID = FactorID.random(using: random)
        let start: EnrollmentStart
        do {
            start = try factors.strategy(kind).beginEnrollment(
                request, user: caller.user, factorID: factorID, client: client, now: now)
        } catch {
            try transactions.write {
                try AuditLog.append(
                    client.event(
                        .mfaEnrollmentFailed, .denied, userID: caller.user.id, detail: "kind=\(kind.rawValue) \(error)"),
                    at: now.millis, on: $0)
            }
            throw error
        }
        let token = SessionToken.generate(random)
        let draft = EnrollmentDraft(
            userID: caller.user.id, factorID: factorID, displayName: start.displayName, pending: start.pending)
        try transactions.write { db in
            try EnrollmentRepository.insertEnrollment(draft, tokenHash: SHA256.hex(token), now: now.millis, on: db)
            try AuditLog.append(
                client.event(.mfaEnrollmentStarted, .success, userID: caller.user.id, detail: "kind=\(kind.rawValue)"),
                at: now.millis, on: db)
        }
        return (start.offer, token)
    }

    /// Finishes an enrollment with its proof of possession, in two
    /// transactions. The first checks the caller's proof is fresh and counts
    /// the attempt (five tries in all, however many arrive at once). The
    /// second checks the proof and, when it is right, stores the factor: a
    /// proof and the factor it makes commit together, and a wrong proof
    /// commits only its audit line (and the phone verification's own count).
    /// The first factor ends the user's other password-only sessions.
    /// - Throws: `SecondFactorFailure.enrollmentNotFound`, `.invalidCode`, `.exists`, `.limitExceeded`,
    ///   and the freshness refusals of `begin`.
    func finish(
        session token: String, proof: EnrollmentProof, displayName rawName: String?, by caller: Caller,
        client: AuditContext
    ) throws -> Factor {
        let now = clock.now()
        let name = try FactorName.parse(rawName, field: "display_name")
        guard SessionToken.isWellFormed(token) else { throw SecondFactorFailure.enrollmentNotFound }
        let tokenHash = SHA256.hex(token)
        guard
            var draft = try transactions.write({ db in
                try requireFreshProof(caller, enrolled: try FactorRepository.list(caller.user.id, on: db), now: now)
                return try EnrollmentRepository.enrollmentAttempt(
                    tokenHash: tokenHash, userID: caller.user.id, now: now.millis, on: db)
            })
        else { throw SecondFactorFailure.enrollmentNotFound }
        if let name { draft.displayName = name }
        let strategy = factors.strategy(draft.kind)
        let stored: Factor?
        do {
            stored = try transactions.write { db -> Factor? in
                try AccountRepository.lock(caller.user.id, on: db)
                guard
                    let enrolled = try strategy.finishEnrollment(draft, proof: proof, client: client, now: now, on: db)
                else {
                    try AuditLog.append(
                        client.event(
                            .mfaEnrollmentFailed, .failure, userID: caller.user.id,
                            detail: "kind=\(draft.kind.rawValue)"),
                        at: now.millis, on: db)
                    return nil
                }
                guard try EnrollmentRepository.useEnrollment(tokenHash: tokenHash, now: now.millis, on: db) else {
                    throw SecondFactorFailure.enrollmentNotFound
                }
                let count = try FactorRepository.list(caller.user.id, on: db).filter(\.kind.isStandalone).count
                guard count < Self.maxFactors else { throw SecondFactorFailure.limitExceeded }
                let factor = Factor(
                    id: draft.factorID, userID: caller.user.id, displayName: draft.displayName, createdAt: now.millis,
                    lastUsedAt: nil,
                    credential: enrolled.credential)
                try FactorRepository.insert(factor, initialStep: enrolled.initialStep, on: db)
                try AuditLog.append(
                    client.event(
                        .mfaEnrolled, .success, userID: caller.user.id,
                        detail:
                            "kind=\(factor.kind.rawValue) id=\(factor.id.raw)\(factor.kind == .device ? " " + SecondFactorService.boundDetail(factor) : "")"
                    ),
                    at: now.millis, on: db)
                if count == 0 {
                    // The first factor: password-only sessions elsewhere (perhaps a thief's) end now.
                    let ended = try SessionRepository.endPasswordOnly(
                        caller.user.id, keep: caller.session.id, at: now.millis, on: db)
                    if ended > 0 {
                        try AuditLog.append(
                            client.event(
                                .sessionRevoked, .success, userID: caller.user.id,
                                detail: "\(ended) password-only sessions ended: first second factor enrolled"),
                            at: now.millis, on: db)
                    }
                }
                return factor
            }
        } catch let error as StoreError where error.kind == .uniqueViolation {
            throw SecondFactorFailure.exists
        }
        guard let factor = stored else { throw SecondFactorFailure.invalidCode }
        changes.publish("user:\(caller.user.id.raw)")
        return factor
    }

    /// The QR code and key of the caller's authenticator-app enrollment under way (`session`), shown again after a
    /// reload or a wrong code; nil when it ended.
    func pendingOffer(session token: String, by caller: Caller, client: AuditContext) throws -> EnrollmentOffer? {
        guard SessionToken.isWellFormed(token) else { return nil }
        let now = clock.now().millis
        guard
            let (factorID, secret) = try transactions.read({
                try EnrollmentRepository.pendingTOTP(
                    tokenHash: SHA256.hex(token), userID: caller.user.id, now: now, on: $0)
            })
        else { return nil }
        return try factors.totp.offer(secret, factorID: factorID, account: caller.user.email, brand: client.brand)
    }

    /// The caller's factors, oldest first.
    func list(_ caller: Caller) throws -> [Factor] {
        try transactions.read { try FactorRepository.list(caller.user.id, on: $0) }
    }

    /// The caller's factors as the API lists them, recovery codes with how many are left.
    func listed(_ caller: Caller) throws -> [EnrolledFactor] {
        try transactions.read { db in
            try FactorRepository.list(caller.user.id, on: db).map { factor in
                var listed = factor.api
                if factor.kind == .recoveryCode {
                    listed.codesLeft = try Int(RecoveryCodeRepository.unused(factor.id, on: db))
                }
                return listed
            }
        }
    }

    /// Removes one of the caller's factors (and the recovery codes with the
    /// last real one).
    /// - Throws: `SecondFactorFailure.secondFactorRequired`, `.factorNotFound`.
    func remove(_ id: FactorID, by caller: Caller, client: AuditContext) throws {
        let now = clock.now().millis
        guard caller.session.freshSecondFactor(now: now, window: reauthenticationWindow) else {
            throw SecondFactorFailure.secondFactorRequired
        }
        try transactions.write { db in
            try AccountRepository.lock(caller.user.id, on: db)
            try Self.delete(id, of: caller.user.id, client: client, now: now, on: db)
        }
        changes.publish("user:\(caller.user.id.raw)")
    }

    /// Deletes one of `user`'s factors in this transaction, and the recovery codes with the last real one, audited
    /// (`why` is added to the entry's detail): the one removal the security page, "This wasn't me" and the API share.
    /// - Throws: `SecondFactorFailure.factorNotFound` when it is not one of theirs.
    static func delete(
        _ id: FactorID, of user: UserID, why: String? = nil, client: AuditContext, now: Int64, on db: any SQLConnection
    ) throws {
        guard try FactorRepository.delete(id, userID: user, on: db) else { throw SecondFactorFailure.factorNotFound }
        var detail = "id=\(id.raw)"
        // Recovery codes alone are no second factor: they go with the last real one.
        if try !FactorRepository.list(user, on: db).contains(where: { $0.kind.isStandalone }),
            try FactorRepository.delete(kind: .recoveryCode, userID: user, on: db) > 0
        {
            detail += ", recovery codes removed with the last factor"
        }
        if let why { detail += ", \(why)" }
        try AuditLog.append(client.event(.mfaRemoved, .success, userID: user, detail: detail), at: now, on: db)
    }

    /// Renames one of the caller's factors (a passkey "Work laptop"): cosmetic, so no fresh proof is asked.
    /// - Throws: `CommonFailure.invalidFields` (`display_name`), `SecondFactorFailure.factorNotFound`.
    func rename(_ id: FactorID, to raw: String?, by caller: Caller, client: AuditContext) throws -> Factor {
        guard let name = try FactorName.parse(raw, field: "display_name") else {
            throw CommonFailure.invalid("display_name", "is required")
        }
        let now = clock.now().millis
        return try transactions.write { db in
            guard try FactorRepository.rename(id, userID: caller.user.id, to: name, on: db),
                let factor = try FactorRepository.list(caller.user.id, on: db).first(where: { $0.id == id })
            else { throw SecondFactorFailure.factorNotFound }
            try AuditLog.append(
                client.event(.mfaRenamed, .success, userID: caller.user.id, detail: "id=\(id.raw)"), at: now, on: db)
            return factor
        }
    }

    /// A new set of recovery codes for the caller (the old set is void).
    /// - Throws: `SecondFactorFailure.needed` without another factor, and the freshness refusals.
    func recoveryCodes(for caller: Caller, client: AuditContext) throws -> [String] {
        let now = clock.now()
        let enrolled = try transactions.read { try FactorRepository.list(caller.user.id, on: $0) }
        try requireFreshProof(caller, enrolled: enrolled, now: now)
        guard enrolled.contains(where: { $0.kind.isStandalone }) else { throw SecondFactorFailure.needed }
        return try factors.recoveryCodes.generate(for: caller.user, client: client)
    }

    /// A verified email and a fresh proof: a recent password (or second factor)
    /// for a first factor, a recent second factor once there is one.
    private func requireFreshProof(_ caller: Caller, enrolled: [Factor], now: Date) throws {
        guard caller.user.emailVerifiedAt != nil else { throw SecondFactorFailure.unverifiedEmail }
        if enrolled.contains(where: { $0.kind.isStandalone }) {
            guard caller.session.freshSecondFactor(now: now.millis, window: reauthenticationWindow) else {
                throw SecondFactorFailure.secondFactorRequired
            }
        } else {
            guard caller.session.freshProof(now: now.millis, window: reauthenticationWindow) else {
                throw SecondFactorFailure.reauthenticationRequired
            }
        }
    }
}
