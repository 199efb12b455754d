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

    /// The signed-in user, with a verified email and a fresh proof.
    private func freshUser(_ request: Request) throws -> SessionAuthenticator.Authenticated {
        let auth = try SessionAuthenticator(env: env).authenticate(request).get()
        guard auth.user.emailVerifiedAt != nil else { throw APIError.unverifiedEmail }
        guard auth.session.freshProof(now: env.nowMillis, window: env.configuration.reauthenticationWindow) else { throw APIError.reauthenticationRequired }
        return auth
    }

    func begin(_ request: Request) throws -> Response {
        let auth = try freshUser(request)
        let body = try request.decode(StartEnrollmentRequest.self)
        guard let factor = SecondFactors.named(body.kind, env), factor.enrollable else {
            throw APIError.invalidFields([.init(name: "kind", reason: "must be phone or totp")])
        }
        let count = try env.read { try FactorRepository.list(userID: auth.user.id, on: $0) }.filter { $0.kind != "recovery_code" }.count
        guard count < Self.maxFactors else { throw APIError.secondFactorLimitExceeded }
        let context = AuditContext(request)
        var draft = try factor.beginEnrollment(body, user: auth.user, factorID: env.newID(), context: context)
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
        let token = request.parameters["session"] ?? ""
        guard SessionToken.isWellFormed(token) else { throw APIError.enrollmentNotFound }
        let tokenHash = SHA256.hex(token)
        let context = AuditContext(request)
        guard var draft = try env.read({ try MFARepository.enrollment(tokenHash: tokenHash, userID: auth.user.id, now: env.nowMillis, on: $0) }),
              let factor = SecondFactors.named(draft.kind, env)
        else { throw APIError.enrollmentNotFound }
        if let name = body.displayName?.trimmingCharacters(in: .whitespacesAndNewlines), !name.isEmpty {
            guard name.count <= 64, !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw APIError.invalidFields([.init(name: "display_name", reason: "must be at most 64 characters, without control characters")])
            }
            draft.displayName = name
        }
        guard let record = try factor.finishEnrollment(draft, code: body.code.trimmingCharacters(in: .whitespaces), context: context) else {
            try env.transaction { db in
                try MFARepository.countEnrollmentFailure(tokenHash: tokenHash, on: db)
                try AuditLog.append(context.event(.mfaEnrollmentFailed, .failure, userID: auth.user.id, detail: "kind=\(factor.kind)"), at: env.nowMillis, on: db)
            }
            throw APIError.invalidCode
        }
        let stored = record
        do {
            try env.transaction { db in
                guard try MFARepository.useEnrollment(tokenHash: tokenHash, now: env.nowMillis, on: db) else { throw APIError.enrollmentNotFound }
                let count = try FactorRepository.list(userID: auth.user.id, on: db).filter { $0.kind != "recovery_code" }.count
                guard count < Self.maxFactors else { throw APIError.secondFactorLimitExceeded }
                try FactorRepository.insert(stored, on: db)
                try AuditLog.append(context.event(.mfaEnrolled, .success, userID: auth.user.id, detail: "kind=\(factor.kind) id=\(stored.id)"),
                                    at: env.nowMillis, on: db)
            }
        } catch let error as StoreError where error.kind == .uniqueViolation {
            throw APIError.secondFactorExists
        }
        return .json(stored.api, status: 201)
    }

    func remove(_ request: Request) throws -> Response {
        let auth = try SessionAuthenticator(env: env).authenticate(request).get()
        guard auth.session.freshSecondFactor(now: env.nowMillis, window: env.configuration.reauthenticationWindow) else {
            throw APIError.secondFactorRequired
        }
        let id = request.parameters["id"] ?? ""
        try env.transaction { db in
            guard try FactorRepository.delete(id: id, userID: auth.user.id, on: db) else { throw APIError.factorNotFound }
            // Recovery codes alone are no second factor: they go with the last real one.
            if try FactorRepository.list(userID: auth.user.id, on: db).allSatisfy({ $0.kind == "recovery_code" }) {
                try db.execute("DELETE FROM mfa_factors WHERE user_id = $1", [.text(auth.user.id)])
            }
            try AuditLog.append(AuditContext(request).event(.mfaRemoved, .success, userID: auth.user.id, detail: "id=\(id)"), at: env.nowMillis, on: db)
        }
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
