import API
import Core
import Crypto
import Foundation
import HTTP
import Store

/// Enrolling, listing and removing second factors, and recovery codes.
/// Enrolling needs a verified email and a fresh proof (password or second
/// factor); removing needs a fresh second-factor proof.
struct EnrollmentRoutes {
    let env: Environment
    static let maxFactors = 10

    func register(on router: inout Router) {
        router.add("POST", "/v1/mfa/enrollments") { try begin($0) }
        router.add("POST", "/v1/mfa/enrollments/:session") { try finish($0) }
        router.add("GET", "/v1/mfa/enrollments") { request in
            let auth = try SessionAuthenticator(env: env).authenticate(request).get()
            let factors = try env.read { try FactorRepository.list(userID: auth.user.id, on: $0) }
            return .json(EnrolledFactors(enrollments: factors.map(\.api)))
        }
        router.add("DELETE", "/v1/mfa/enrollments/:id") { try remove($0) }
        router.add("POST", "/v1/mfa/recovery-codes") { try recoveryCodes($0) }
    }

    /// The signed-in user, with a verified email and a fresh proof: a recent
    /// password for a first factor, a recent second factor once there is one
    /// (else a stolen password could add the thief's phone).
    private func freshUser(_ request: Request) throws -> SessionAuthenticator.Authenticated {
        let auth = try SessionAuthenticator(env: env).authenticate(request).get()
        guard auth.user.emailVerifiedAt != nil else { throw APIError.unverifiedEmail }
        let window = env.configuration.reauthenticationWindow, now = env.nowMillis
        let hasFactor = try env.read { try FactorRepository.list(userID: auth.user.id, on: $0) }.contains { $0.kind != "recovery_code" }
        if hasFactor {
            guard auth.session.freshSecondFactor(now: now, window: window) else { throw APIError.secondFactorRequired }
        } else {
            guard auth.session.freshProof(now: now, window: window) else { throw APIError.reauthenticationRequired }
        }
        return auth
    }

    /// Serialises a user's factor changes (a row lock on PostgreSQL; SQLite
    /// transactions are serial anyway), so limits and "last factor" checks hold.
    private func lockUser(_ id: String, on db: any SQLConnection) throws {
        try db.execute("UPDATE users SET id = id WHERE id = $1", [.text(id)])
    }

    func begin(_ request: Request) throws -> Response {
        let auth = try freshUser(request)
        let body = try request.decode(StartEnrollmentRequest.self)
        guard let factor = SecondFactors.named(body.kind, env), factor.enrollable else {
            throw APIError.invalidFields([.init(name: "kind", reason: "must be phone, totp, device or passkey")])
        }
        let count = try env.read { try FactorRepository.list(userID: auth.user.id, on: $0) }.filter { $0.kind != "recovery_code" }.count
        guard count < Self.maxFactors else { throw APIError.secondFactorLimitExceeded }
        let context = AuditContext(request)
        var draft: EnrollmentDraft
        do {
            draft = try factor.beginEnrollment(body, user: auth.user, factorID: env.newID(), context: context)
        } catch let error as APIError {
            try env.audit(context.event(.mfaEnrollmentFailed, .denied, userID: auth.user.id, detail: "kind=\(factor.kind) \(error.code)"))
            throw error
        }
        let token = SessionToken.generate(env.random)
        try env.transaction { db in
            try MFARepository.insertEnrollment(draft, tokenHash: SHA256.hex(token), now: env.nowMillis, on: db)
            try AuditLog.append(context.event(.mfaEnrollmentStarted, .success, userID: auth.user.id, detail: "kind=\(factor.kind)"), at: env.nowMillis, on: db)
        }
        draft.response.enrollmentSession = token
        return .json(draft.response, status: 202)
    }

    func finish(_ request: Request) throws -> Response {
        let auth = try freshUser(request)
        let body = try request.decode(FinishEnrollmentRequest.self)
        let proof = try Proof.from(code: body.code ?? body.signature, credential: body.credential)
        let name = try FactorName.parse(body.displayName, field: "display_name")
        let token = request.parameters["session"] ?? ""
        guard SessionToken.isWellFormed(token) else { throw APIError.enrollmentNotFound }
        let tokenHash = SHA256.hex(token)
        let context = AuditContext(request)
        // The attempt is counted first, atomically: five tries in all, however many arrive at once.
        guard var draft = try env.transaction({ try MFARepository.enrollmentAttempt(tokenHash: tokenHash, userID: auth.user.id, now: env.nowMillis, on: $0) }),
              let factor = SecondFactors.named(draft.kind, env)
        else { throw APIError.enrollmentNotFound }
        if let name { draft.displayName = name }
        guard let record = try factor.finishEnrollment(draft, proof: proof, context: context) else {
            try env.audit(context.event(.mfaEnrollmentFailed, .failure, userID: auth.user.id, detail: "kind=\(factor.kind)"))
            throw APIError.invalidCode
        }
        let stored = record
        do {
            try env.transaction { db in
                try lockUser(auth.user.id, on: db)
                guard try MFARepository.useEnrollment(tokenHash: tokenHash, now: env.nowMillis, on: db) else { throw APIError.enrollmentNotFound }
                let count = try FactorRepository.list(userID: auth.user.id, on: db).filter { $0.kind != "recovery_code" }.count
                guard count < Self.maxFactors else { throw APIError.secondFactorLimitExceeded }
                try FactorRepository.insert(stored, on: db)
                try AuditLog.append(context.event(.mfaEnrolled, .success, userID: auth.user.id, detail: "kind=\(factor.kind) id=\(stored.id)"),
                                    at: env.nowMillis, on: db)
                if count == 0 {
                    // The first factor: password-only sessions elsewhere (perhaps a thief's) end now.
                    let ended = try db.execute("UPDATE sessions SET ended_at = $3, end_reason = 'second_factor_enrolled' WHERE user_id = $1 AND id <> $2 AND aal < 2 AND ended_at IS NULL",
                                               [.text(auth.user.id), .text(auth.session.id), .int(env.nowMillis)])
                    if ended > 0 {
                        try AuditLog.append(context.event(.sessionRevoked, .success, userID: auth.user.id, detail: "\(ended) password-only sessions ended: first second factor enrolled"),
                                            at: env.nowMillis, on: db)
                    }
                }
            }
        } catch let error as StoreError where error.kind == .uniqueViolation {
            throw APIError.secondFactorExists
        }
        // A first factor ended the user's password-only sessions.
        env.changes.publish("user:\(auth.user.id)")
        return .json(stored.api, status: 201)
    }

    func remove(_ request: Request) throws -> Response {
        let auth = try SessionAuthenticator(env: env).authenticate(request).get()
        guard auth.session.freshSecondFactor(now: env.nowMillis, window: env.configuration.reauthenticationWindow) else {
            throw APIError.secondFactorRequired
        }
        let id = request.parameters["id"] ?? ""
        try env.transaction { db in
            try lockUser(auth.user.id, on: db)
            guard try FactorRepository.delete(id: id, userID: auth.user.id, on: db) else { throw APIError.factorNotFound }
            var detail = "id=\(id)"
            // Recovery codes alone are no second factor: they go with the last real one.
            if try FactorRepository.list(userID: auth.user.id, on: db).allSatisfy({ $0.kind == "recovery_code" }),
               try db.execute("DELETE FROM mfa_factors WHERE user_id = $1", [.text(auth.user.id)]) > 0 {
                detail += ", recovery codes removed with the last factor"
            }
            try AuditLog.append(AuditContext(request).event(.mfaRemoved, .success, userID: auth.user.id, detail: detail), at: env.nowMillis, on: db)
        }
        env.changes.publish("user:\(auth.user.id)")
        return .noContent
    }

    func recoveryCodes(_ request: Request) throws -> Response {
        let auth = try freshUser(request)
        let others = try env.read { try FactorRepository.list(userID: auth.user.id, on: $0) }.filter { $0.kind != "recovery_code" }
        guard !others.isEmpty else { throw APIError.secondFactorNeeded }
        let codes = try RecoveryCodesFactor(env: env).generate(for: auth.user, context: AuditContext(request))
        return .json(RecoveryCodes(codes: codes), status: 201)
    }
}
