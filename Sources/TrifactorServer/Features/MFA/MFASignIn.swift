import API
import Core
import Crypto
import Foundation
import HTTP
import Store

/// The second step of sign-in, step-up on a live session, and the shared
/// way of proving a factor: the attempt is counted per user before the
/// check (10 free, then a lockout doubling to 15 minutes), a success resets
/// the count. Codes are bound to their purpose: one sent for a sign-in does
/// not work for a step-up or a transfer.
struct MFASignIn {
    let env: Environment

    func register(on router: inout Router) {
        router.add("POST", "/v1/mfa/sign-in/challenges") { try challenge($0) }
        router.add("POST", "/v1/sessions/mfa") { try complete($0) }
        router.add("POST", "/v1/session/step-up") { try stepUp($0) }
    }

    /// The hints shown after the password: every factor, and one entry for
    /// recovery codes while some are unused.
    static func hints(userID: String, on db: any SQLConnection) throws -> [MFAHint] {
        try FactorRepository.list(userID: userID, on: db).compactMap { f in
            if f.kind == "recovery_code" {
                return try MFARepository.hasRecoveryCodes(factorID: f.id, on: db) ? MFAHint(enrollmentID: f.id, kind: f.kind, displayName: nil, maskedPhone: nil) : nil
            }
            return MFAHint(enrollmentID: f.id, kind: f.kind, displayName: f.displayName, maskedPhone: f.maskedPhone)
        }
    }

    /// A pending sign-in whose password was proven (a passwordless push's
    /// pending credential never reaches this second step).
    private func pending(_ credential: String) throws -> MFARepository.Pending {
        guard SessionToken.isWellFormed(credential),
              let p = try env.read({ try MFARepository.pending(tokenHash: SHA256.hex(credential), now: env.nowMillis, on: $0) }),
              p.passwordVerifiedAt > 0
        else { throw APIError.invalidPendingCredential }
        return p
    }

    func challenge(_ request: Request) throws -> Response {
        let body = try request.decode(MFAChallengeRequest.self)
        let p = try pending(body.pendingCredential)
        let factor = try find(body.enrollmentID, userID: p.userID)
        let purpose = Purpose.signIn(pendingHash: p.tokenHash, text: "Your sign-in code")
        let challenge = try send(factor, purpose: purpose, userID: p.userID, request: request)
        var answer = challengeAnswer(factor, challenge: challenge, purpose: "signin")
        if factor.kind == "device" {
            // Also push it to the device, with a number to match.
            if let push = try PushApprovalRoutes.create(env: env, factor: factor, purpose: purpose, context: AuditContext(request)) {
                answer.approvalID = push.id
                answer.number = push.number
            }
        }
        return .json(answer, status: 202)
    }

    func complete(_ request: Request) throws -> Response {
        let body = try request.decode(MFASignInRequest.self)
        let p = try pending(body.pendingCredential)
        let factor = try find(body.enrollmentID, userID: p.userID)
        let purpose = Purpose.signIn(pendingHash: p.tokenHash)
        let strategy: any SecondFactor
        if let approvalID = body.approvalID, factor.kind == "device", let device = SecondFactors.named("device", env) {
            let ok = try PushApprovalRoutes.consume(env: env, approvalID: approvalID, factor: factor, purpose: purpose)
            try env.transaction { db in
                if ok { try FactorRepository.markUsed(id: factor.id, at: env.nowMillis, on: db) }
                try AuditLog.append(AuditContext(request).event(ok ? .mfaSucceeded : .mfaFailed, ok ? .success : .failure, userID: p.userID,
                                                                detail: "kind=device push approval=\(approvalID)"), at: env.nowMillis, on: db)
            }
            guard ok else { throw APIError.invalidCode }
            strategy = device
        } else {
            strategy = try prove(factor, proof: try Proof.from(code: body.code, credential: body.assertion), purpose: purpose, userID: p.userID, request: request)
        }
        let issued = try env.transaction { db in
            // Single use: a second completion with the same pending sign-in finds it spent.
            guard try MFARepository.usePending(tokenHash: p.tokenHash, now: env.nowMillis, on: db) else { throw APIError.invalidPendingCredential }
            let proofs = SessionIssuer.Proofs(aal: .aal2, methods: ["pwd", strategy.method], passwordVerifiedAt: p.passwordVerifiedAt, secondFactor: true,
                                              deviceID: factor.kind == "device" ? factor.id : nil)
            return try SessionIssuer(env: env).issue(userID: p.userID, proofs, context: AuditContext(request), detail: "factor=\(factor.id)", on: db)
        }
        return .json(SessionCreated(token: issued.token, session: issued.session.info(env)), status: 201)
    }

    func stepUp(_ request: Request) throws -> Response {
        let auth = try SessionAuthenticator(env: env).authenticate(request).get()
        let body = try request.decode(StepUpRequest.self)
        let factor = try find(body.enrollmentID, userID: auth.user.id)
        let purpose = Purpose.stepUp(sessionID: auth.session.id, text: "Your verification code")
        guard body.code != nil || body.assertion != nil else {
            let challenge = try send(factor, purpose: purpose, userID: auth.user.id, request: request)
            return .json(challengeAnswer(factor, challenge: challenge, purpose: "stepup"), status: 202)
        }
        let proof = try Proof.from(code: body.code, credential: body.assertion)
        // An AAL2 session lives 24 hours at most: an older one cannot be raised, only replaced.
        let aal2 = env.configuration.sessionsAAL2
        guard Date(millis: auth.session.createdAt).addingTimeInterval(aal2.absoluteLifetime) > env.clock.now() else { throw APIError.reauthenticationRequired }
        let strategy = try prove(factor, proof: proof, purpose: purpose, userID: auth.user.id, request: request)
        try env.transaction { db in
            guard try SessionRepository.stepUp(id: auth.session.id, method: strategy.method, at: env.nowMillis, on: db) else { throw APIError.unauthenticated }
            try AuditLog.append(AuditContext(request).event(.sessionSteppedUp, .success, userID: auth.user.id, detail: "method=\(strategy.method)"),
                                at: env.nowMillis, on: db)
        }
        env.changes.publish("session:\(auth.session.id)")
        let refreshed = try SessionAuthenticator(env: env).authenticate(request).get()
        return .json(CurrentSession(session: refreshed.session.info(env), user: refreshed.user.info))
    }

    // MARK: Shared by sign-in, step-up and authorizations

    /// The answer to a challenge: what a device signs, or a passkey's request options.
    func challengeAnswer(_ factor: FactorRecord, challenge: String?, purpose label: String) -> ChallengeSent {
        var answer = ChallengeSent(challenge: challenge, purpose: challenge.map { _ in label })
        if factor.kind == "passkey", let challenge {
            answer.options = PasskeyFactor(env: env).requestOptions(challenge: challenge, factors: [factor])
        }
        return answer
    }

    func find(_ enrollmentID: String, userID: String) throws -> FactorRecord {
        guard let f = try env.read({ try FactorRepository.find(id: enrollmentID, userID: userID, on: $0) }) else { throw APIError.factorNotFound }
        return f
    }

    /// Sends the challenge of `factor` for `purpose`, and audits it; returns
    /// what a device key must sign, if anything.
    @discardableResult
    func send(_ factor: FactorRecord, purpose: Purpose, userID: String, request: Request) throws -> String? {
        guard let strategy = SecondFactors.named(factor.kind, env) else { throw APIError.secondFactorUnusable }
        var failure: (any Error)?
        var challenge: String?
        do { challenge = try strategy.challenge(factor, purpose: purpose, context: AuditContext(request)) } catch { failure = error }
        try env.transaction { db in
            let outcome = failure.map { "not sent: \(($0 as? APIError)?.code ?? "error")" } ?? "sent"
            try AuditLog.append(AuditContext(request).event(.mfaChallengeSent, failure == nil ? .success : .failure, userID: userID,
                                                            detail: "kind=\(factor.kind) \(outcome)"), at: env.nowMillis, on: db)
        }
        if let failure { throw failure }
        return challenge
    }

    /// Proves `factor` with `code` for `purpose`, under the per-user lockout.
    /// - Throws: `APIError.tooManyAttempts` while locked, `APIError.invalidCode` for a wrong code.
    @discardableResult
    func prove(_ factor: FactorRecord, proof: Proof, purpose: Purpose, userID: String, request: Request) throws -> any SecondFactor {
        guard let strategy = SecondFactors.named(factor.kind, env) else { throw APIError.secondFactorUnusable }
        let context = AuditContext(request)
        let throttle = LoginThrottle(policy: env.configuration.mfaLockout)
        let key = "mfa:\(userID)"
        let admission = try env.transaction { db -> LoginThrottle.Admission in
            let admission = try throttle.admit(key: key, nowMillis: env.nowMillis, on: db)
            if case .locked = admission { try AuditLog.append(context.event(.mfaLocked, .denied, userID: userID), at: env.nowMillis, on: db) }
            return admission
        }
        if case .locked(let wait) = admission { throw APIError.tooManyAttempts(retryAfter: wait) }
        let ok = try strategy.verify(factor, proof: proof, purpose: purpose, context: context)
        try env.transaction { db in
            let now = env.nowMillis
            if ok {
                try throttle.reset(key: key, on: db)
                try FactorRepository.markUsed(id: factor.id, at: now, on: db)
            }
            try AuditLog.append(context.event(ok ? .mfaSucceeded : .mfaFailed, ok ? .success : .failure, userID: userID,
                                              detail: "kind=\(factor.kind) purpose=\(purpose.key.prefix(while: { $0 != ":" }))"), at: now, on: db)
        }
        guard ok else { throw APIError.invalidCode }
        return strategy
    }
}
