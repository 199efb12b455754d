import API
import Core
import Foundation
import HTTP

/// `POST /v1/accounts/password-reset` (a code by email, the same answer for
/// every address), `…/verify` (the code: a reset credential and the factors
/// to prove), `…/challenges` (send one factor's challenge; `…/call`: the
/// phone's code by a voice call now) and `…/complete`
/// (the new password, with the factor's proof).
struct PasswordResetRoutes {
    let resets: PasswordResetService
    /// The second step's decoding of codes and passkey assertions, shared.
    let mfa: MFARoutes

    func register(on routes: inout APIRoutes) {
        routes.add("POST", "/v1/accounts/password-reset", idempotent: true) { request in
            let body = try request.decode(PasswordResetRequest.self)
            try resets.request(email: body.email, client: AuditContext(request))
            return .json(PasswordResetSent(), status: 202)
        }
        routes.add("POST", "/v1/accounts/password-reset/verify") { request in
            let body = try request.decode(VerifyPasswordResetRequest.self)
            let verified = try resets.verify(email: body.email, code: body.code, client: AuditContext(request))
            return .json(
                PasswordResetVerified(
                    resetCredential: verified.credential, expiresAt: Date(millis: verified.expiresAt),
                    secondFactorRequired: !verified.hints.isEmpty, hints: verified.hints.map(\.api)))
        }
        routes.add("POST", "/v1/accounts/password-reset/challenges", idempotent: true) { request in
            let body = try request.decode(PasswordResetChallengeRequest.self)
            let (issued, push) = try resets.challenge(
                credential: body.resetCredential, factorID: FactorID(body.enrollmentID), client: AuditContext(request))
            var answer = MFARoutes.challengeSent(issued, purpose: "reset")
            answer.approvalID = push?.id.raw
            answer.number = push?.number
            return .json(answer, status: 202)
        }
        routes.add("POST", "/v1/accounts/password-reset/challenges/call", idempotent: true) { request in
            let body = try request.decode(PasswordResetChallengeRequest.self)
            try resets.callInstead(
                credential: body.resetCredential, factorID: FactorID(body.enrollmentID), client: AuditContext(request))
            return .json(ChallengeSent(), status: 202)
        }
        routes.add("POST", "/v1/accounts/password-reset/complete", execution: .hashing) { request in
            let body = try request.decode(CompletePasswordResetRequest.self)
            var answer: SecondFactorService.Answer?
            if let approval = body.approvalID {
                answer = .approval(ApprovalID(approval))
            } else if body.code != nil || body.assertion != nil {
                answer = .proof(try mfa.proof(code: body.code, assertion: body.assertion))
            }
            try resets.complete(
                credential: body.resetCredential, newPassword: body.newPassword,
                factorID: body.enrollmentID.map(FactorID.init),
                answer: answer, client: AuditContext(request))
            return .noContent
        }
    }
}

/// The password reset's problems.
extension PasswordResetFailure: APIFailure {
    var problem: APIError {
        switch self {
        case .invalidCredential: .invalidResetCredential
        }
    }
}
