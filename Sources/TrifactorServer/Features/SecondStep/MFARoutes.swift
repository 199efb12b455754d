import API
import Core
import Foundation
import HTTP

/// The sign-in's second step and step-up on a live session; and how every
/// flow that takes a second factor's proof reads it from a request
/// (`proof`, `code`) and answers a challenge (`challengeSent`).
struct MFARoutes {
    let secondFactors: SecondFactorService
    let passkeys: PasskeyFactor
    let policies: SessionPolicies

    func register(on routes: inout APIRoutes) {
        routes.add("POST", "/v1/mfa/sign-in/challenges", idempotent: true) { request in
            let body = try request.decode(MFAChallengeRequest.self)
            let (issued, push) = try secondFactors.signInChallenge(
                pendingCredential: body.pendingCredential, factorID: FactorID(body.enrollmentID),
                client: AuditContext(request))
            var answer = Self.challengeSent(issued, purpose: "signin")
            answer.approvalID = push?.id.raw
            answer.number = push?.number
            return .json(answer, status: 202)
        }
        routes.add("POST", "/v1/mfa/sign-in/challenges/call", idempotent: true) { request in
            let body = try request.decode(MFAChallengeRequest.self)
            try secondFactors.callInstead(
                pendingCredential: body.pendingCredential, factorID: FactorID(body.enrollmentID),
                client: AuditContext(request))
            return .json(ChallengeSent(), status: 202)
        }
        routes.add("POST", "/v1/sessions/mfa") { request in
            let body = try request.decode(MFASignInRequest.self)
            let answer: SecondFactorService.Answer
            if let approval = body.approvalID {
                answer = .approval(ApprovalID(approval))
            } else {
                answer = .proof(try proof(code: body.code, assertion: body.assertion))
            }
            let issued = try secondFactors.completeSignIn(
                pendingCredential: body.pendingCredential, factorID: FactorID(body.enrollmentID), answer: answer,
                client: AuditContext(request))
            return .json(SessionCreated(token: issued.token, session: issued.session.info(policies)), status: 201)
        }
        routes.authenticated("POST", "/v1/session/step-up", idempotent: true) { request, caller in
            let body = try request.decode(StepUpRequest.self)
            let factorID = FactorID(body.enrollmentID)
            guard body.code != nil || body.assertion != nil else {
                let issued = try secondFactors.stepUpChallenge(
                    caller, factorID: factorID, client: AuditContext(request))
                return .json(Self.challengeSent(issued, purpose: "stepup"), status: 202)
            }
            let raised = try secondFactors.stepUp(
                caller, factorID: factorID, proof: try proof(code: body.code, assertion: body.assertion),
                client: AuditContext(request))
            return .json(CurrentSession(session: raised.info(policies), user: caller.user.info))
        }
    }

    /// A passkey's assertion (checked as far as it can be now), or a code.
    func proof(code: String?, assertion: CredentialJSON?) throws -> Proof {
        if let assertion { return passkeys.proof(assertion) }
        return .code(try Self.code(code))
    }

    /// A non-empty code (or a device's signature). A code a person typed (at
    /// most 32 characters: a signature is longer) is taken as they typed it:
    /// spaces and dashes between groups, full-width digits (`TypedCode`).
    static func code(_ raw: String?, field: String = "code") throws -> String {
        guard let code = raw?.trimmingCharacters(in: .whitespacesAndNewlines), !code.isEmpty, code.count <= 4096 else {
            throw CommonFailure.invalid(
                field,
                field == "code" ? "is required (a device sends its signature, a passkey its credential)" : "is required"
            )
        }
        return code.count <= 32 ? TypedCode.normalize(code) : code
    }

    /// The answer to a challenge: what a device signs, or a passkey's request options.
    static func challengeSent(_ issued: ChallengeIssued, purpose label: String) -> ChallengeSent {
        switch issued {
        case .none: return ChallengeSent()
        case .sign(let challenge): return ChallengeSent(challenge: challenge, purpose: label)
        case .passkey(let options):
            var answer = ChallengeSent(challenge: options.challenge, purpose: label)
            answer.options = options
            return answer
        }
    }
}

/// The second-factor feature's problems.
extension SecondFactorFailure: APIFailure {
    var problem: APIError {
        switch self {
        case .invalidCode: .invalidCode
        case .wrongProof(let remaining): .invalidCode.remaining(remaining)
        case .locked(let wait): .tooManyAttempts(retryAfter: wait)
        case .exhausted: .attemptsExhausted
        case .frozen: .secondFactorFrozen
        case .factorNotFound: .factorNotFound
        case .unusable: .secondFactorUnusable
        case .exists: .secondFactorExists
        case .limitExceeded: .secondFactorLimitExceeded
        case .needed: .secondFactorNeeded
        case .enrollmentNotFound: .enrollmentNotFound
        case .unverifiedEmail: .unverifiedEmail
        case .reauthenticationRequired: .reauthenticationRequired
        case .secondFactorRequired: .secondFactorRequired
        case .totpUnavailable: .totpUnavailable
        case .deliveryUnavailable: .deliveryUnavailable
        case .invalidPendingCredential: .invalidPendingCredential
        }
    }
}
