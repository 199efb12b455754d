import Core
import API
import Foundation
import Messaging
import Phone

/// A phone that receives codes: SMS first, a voice call that speaks the code
/// if the SMS step times out. Codes go through the phone verification
/// service under Trifactor's internal key, so its limits, attempt counting,
/// delivery and audit apply unchanged.
struct PhoneFactor: SecondFactor {
    let env: Environment
    var kind: String { "phone" }
    var method: String { "sms" }
    var enrollable: Bool { true }

    func beginEnrollment(_ request: StartEnrollmentRequest, user: UserRecord, factorID: String, context: AuditContext) throws -> EnrollmentDraft {
        guard let raw = request.phone else { throw APIError.invalidFields([.init(name: "phone", reason: "is required for a phone factor")]) }
        let number: PhoneNumber
        do {
            number = try PhoneNumber(parsing: raw, region: request.country)
        } catch {
            throw APIError.invalidFields([.init(name: "phone", reason: error.description)])
        }
        guard number.canReceiveSMS else {
            throw APIError.invalidFields([.init(name: "phone", reason: "cannot receive SMS (it is a \(number.kind.rawValue.replacingOccurrences(of: "_", with: " ")) number)")])
        }
        let taken = try env.read { db in
            try db.queryOne("SELECT id FROM mfa_factors WHERE user_id = $1 AND phone = $2", [.text(user.id), .text(number.digits)]) != nil
        }
        if taken { throw APIError.secondFactorExists }
        let requestID = try send(to: number, purpose: "Your enrollment code", context: context)
        return EnrollmentDraft(kind: kind, userID: user.id, factorID: factorID, displayName: "Phone ending \(number.digits.suffix(4))",
                               phone: number.digits, verifyRequestID: requestID, response: EnrollmentStarted(maskedPhone: number.masked))
    }

    func finishEnrollment(_ draft: EnrollmentDraft, proof: Proof, context: AuditContext) throws -> FactorRecord? {
        guard let code = proof.code else { return nil }
        guard let id = draft.verifyRequestID, try check(id, code: code, context: context) else { return nil }
        return FactorRecord(id: draft.factorID, userID: draft.userID, kind: kind, displayName: draft.displayName, phone: draft.phone,
                            secretSealed: nil, createdAt: env.nowMillis, lastUsedAt: nil)
    }

    func challenge(_ factor: FactorRecord, purpose: Purpose, context: AuditContext) throws -> String? {
        guard let digits = factor.phone, let number = try? PhoneNumber(parsing: digits) else { throw APIError.secondFactorUnusable }
        let requestID = try send(to: number, purpose: purpose.text, context: context)
        _ = try env.transaction { db in
            try db.execute("INSERT INTO mfa_challenges (id, user_id, factor_id, purpose, verify_request_id, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
                           [.text(env.newID()), .text(factor.userID), .text(factor.id), .text(purpose.key), .text(requestID), .int(env.nowMillis)])
        }
        return nil
    }

    func verify(_ factor: FactorRecord, proof: Proof, purpose: Purpose, context: AuditContext) throws -> Bool {
        guard let code = proof.code else { return false }
        let requestID = try env.read { db in
            try db.queryOne("SELECT verify_request_id FROM mfa_challenges WHERE factor_id = $1 AND purpose = $2 ORDER BY created_at DESC, id LIMIT 1",
                            [.text(factor.id), .text(purpose.key)])?.optionalText("verify_request_id")
        }
        guard let requestID else { return false }
        return try check(requestID, code: code, context: context)
    }

    /// Starts an SMS-then-voice verification; a running one for the same number is replaced.
    private func send(to number: PhoneNumber, purpose: String?, context: AuditContext) throws -> String {
        let service = VerifyService(env: env)
        let start = VerifyService.Start(brand: env.configuration.totpIssuer, locale: "en-us",
                                        steps: [.init(channel: .sms, to: number.digits), .init(channel: .voice, to: number.digits)],
                                        countryCodes: [number.countryCallingCode], channelTimeout: 120, codeLength: 6, customCode: nil,
                                        clientRef: nil, purpose: purpose)
        do {
            return try service.start(start, key: APIKeys.internalMFA, context: context)
        } catch let error as VerifyError where error.status == 409 {
            if let running = error.conflictingRequestID { try service.supersede(id: running, key: APIKeys.internalMFA) }
            return try service.start(start, key: APIKeys.internalMFA, context: context)
        } catch let error as VerifyError where error.status == 429 {
            throw APIError.rateLimited(retryAfter: error.retryAfter ?? 60)
        } catch let error as VerifyError where error.status == 503 {
            throw APIError.deliveryUnavailable
        }
    }

    /// True when `code` completes the verification `id`; false for a wrong, used or expired one.
    private func check(_ id: String, code: String, context: AuditContext) throws -> Bool {
        guard VerifyWorkflow.isValidCode(code) else { return false }
        do {
            try VerifyService(env: env).check(id: id, code: code, key: APIKeys.internalMFA, context: context)
            return true
        } catch let error as VerifyError where [400, 404, 410].contains(error.status) {
            return false
        }
    }
}
