import API
import Core
import Foundation
import HTTP

/// Enrolling, listing and removing second factors; recovery codes; the
/// sign-in's second step; step-up on a live session.
struct MFARoutes {
    let enrollments: EnrollmentService
    let secondFactors: SecondFactorService
    let passkeys: PasskeyFactor
    let policies: SessionPolicies

    func register(on routes: inout APIRoutes) {
        routes.authenticated("POST", "/v1/mfa/enrollments") { request, caller in
            let body = try request.decode(StartEnrollmentRequest.self)
            let (offer, session) = try enrollments.begin(body, by: caller, client: AuditContext(request))
            return .json(Self.started(offer, session: session), status: 202)
        }
        routes.authenticated("POST", "/v1/mfa/enrollments/:session") { request, caller in
            let body = try request.decode(FinishEnrollmentRequest.self)
            let proof: EnrollmentProof
            if let credential = body.credential {
                proof = .registration(credential)
            } else if let approval = body.approvalSignature {
                proof = .deviceSignatures(try Self.code(body.signature ?? body.code, field: "signature"), approval: try Self.code(approval, field: "approval_signature"))
            } else {
                proof = .code(try Self.code(body.code ?? body.signature))
            }
            let factor = try enrollments.finish(session: request.parameters["session"] ?? "", proof: proof, displayName: body.displayName,
                                                by: caller, client: AuditContext(request))
            return .json(factor.api, status: 201)
        }
        routes.authenticated("GET", "/v1/mfa/enrollments") { _, caller in
            .json(EnrolledFactors(enrollments: try enrollments.listed(caller)))
        }
        routes.authenticated("PATCH", "/v1/mfa/enrollments/:id") { request, caller in
            let body = try request.decode(RenameFactorRequest.self)
            return .json(try enrollments.rename(FactorID(request.parameters["id"] ?? ""), to: body.displayName, by: caller, client: AuditContext(request)).api)
        }
        routes.authenticated("DELETE", "/v1/mfa/enrollments/:id") { request, caller in
            try enrollments.remove(FactorID(request.parameters["id"] ?? ""), by: caller, client: AuditContext(request))
            return .noContent
        }
        routes.authenticated("POST", "/v1/mfa/recovery-codes") { request, caller in
            .json(RecoveryCodes(codes: try enrollments.recoveryCodes(for: caller, client: AuditContext(request))), status: 201)
        }

        routes.add("POST", "/v1/mfa/sign-in/challenges", idempotent: true) { request in
            let body = try request.decode(MFAChallengeRequest.self)
            let (issued, push) = try secondFactors.signInChallenge(pendingCredential: body.pendingCredential, factorID: FactorID(body.enrollmentID),
                                                                    client: AuditContext(request))
            var answer = Self.challengeSent(issued, purpose: "signin")
            answer.approvalID = push?.id.raw
            answer.number = push?.number
            return .json(answer, status: 202)
        }
        routes.add("POST", "/v1/mfa/sign-in/challenges/call", idempotent: true) { request in
            let body = try request.decode(MFAChallengeRequest.self)
            try secondFactors.callInstead(pendingCredential: body.pendingCredential, factorID: FactorID(body.enrollmentID), client: AuditContext(request))
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
            let issued = try secondFactors.completeSignIn(pendingCredential: body.pendingCredential, factorID: FactorID(body.enrollmentID), answer: answer,
                                                          client: AuditContext(request))
            return .json(SessionCreated(token: issued.token, session: issued.session.info(policies)), status: 201)
        }
        routes.authenticated("POST", "/v1/session/step-up", idempotent: true) { request, caller in
            let body = try request.decode(StepUpRequest.self)
            let factorID = FactorID(body.enrollmentID)
            guard body.code != nil || body.assertion != nil else {
                let issued = try secondFactors.stepUpChallenge(caller, factorID: factorID, client: AuditContext(request))
                return .json(Self.challengeSent(issued, purpose: "stepup"), status: 202)
            }
            let raised = try secondFactors.stepUp(caller, factorID: factorID, proof: try proof(code: body.code, assertion: body.assertion),
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
            throw CommonFailure.invalid(field, field == "code" ? "is required (a device sends its signature, a passkey its credential)" : "is required")
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

    static func started(_ offer: EnrollmentOffer, session: String) -> EnrollmentStarted {
        switch offer {
        case .phone(let masked): EnrollmentStarted(enrollmentSession: session, maskedPhone: masked)
        case .totp(let secret, let uri, let svg): EnrollmentStarted(enrollmentSession: session, secret: secret, otpauthURI: uri, qrSVG: svg)
        case .device(let challenge): EnrollmentStarted(enrollmentSession: session, challenge: challenge)
        case .passkey(let options): EnrollmentStarted(enrollmentSession: session, options: options)
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
