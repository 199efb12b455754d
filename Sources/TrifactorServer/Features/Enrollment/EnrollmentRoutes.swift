import API
import Core
import HTTP

/// Enrolling, listing, renaming and removing second factors; recovery codes.
struct EnrollmentRoutes {
    let enrollments: EnrollmentService

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
                proof = .deviceSignatures(
                    try MFARoutes.code(body.signature ?? body.code, field: "signature"),
                    approval: try MFARoutes.code(approval, field: "approval_signature"))
            } else {
                proof = .code(try MFARoutes.code(body.code ?? body.signature))
            }
            let factor = try enrollments.finish(
                session: request.parameters["session"] ?? "", proof: proof, displayName: body.displayName,
                by: caller, client: AuditContext(request))
            return .json(factor.api, status: 201)
        }
        routes.authenticated("GET", "/v1/mfa/enrollments") { _, caller in
            .json(EnrolledFactors(enrollments: try enrollments.listed(caller)))
        }
        routes.authenticated("PATCH", "/v1/mfa/enrollments/:id") { request, caller in
            let body = try request.decode(RenameFactorRequest.self)
            return .json(
                try enrollments.rename(
                    FactorID(request.parameters["id"] ?? ""), to: body.displayName, by: caller,
                    client: AuditContext(request)
                ).api)
        }
        routes.authenticated("DELETE", "/v1/mfa/enrollments/:id") { request, caller in
            try enrollments.remove(FactorID(request.parameters["id"] ?? ""), by: caller, client: AuditContext(request))
            return .noContent
        }
        routes.authenticated("POST", "/v1/mfa/recovery-codes") { request, caller in
            .json(
                RecoveryCodes(codes: try enrollments.recoveryCodes(for: caller, client: AuditContext(request))),
                status: 201)
        }
    }

    static func started(_ offer: EnrollmentOffer, session: String) -> EnrollmentStarted {
        switch offer {
        case .phone(let masked): EnrollmentStarted(enrollmentSession: session, maskedPhone: masked)
        case .totp(let secret, let uri, let svg):
            EnrollmentStarted(enrollmentSession: session, secret: secret, otpauthURI: uri, qrSVG: svg)
        case .device(let challenge): EnrollmentStarted(enrollmentSession: session, challenge: challenge)
        case .passkey(let options): EnrollmentStarted(enrollmentSession: session, options: options)
        }
    }
}
