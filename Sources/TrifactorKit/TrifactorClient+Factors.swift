import API
import Foundation

/// An enrollment begun and not yet confirmed: show the secret or the QR
/// code (TOTP), or ask for the code that was sent (phone), then `confirm`.
public struct PendingEnrollment: Sendable {
    let client: TrifactorClient
    let session: String
    /// A phone's masked number (a code was sent to it).
    public let maskedPhone: String?
    /// A TOTP secret (base32), to type into an authenticator app.
    public let secret: String?
    /// The `otpauth://` URI, for a QR code or an authenticator that takes links.
    public let otpauthURI: String?
    /// The server's QR code of `otpauthURI` (SVG).
    public let qrSVG: String?

    /// Confirms with the code from the SMS or the authenticator app.
    /// - Throws: `TrifactorError.server` `invalid_code` (5 tries), `enrollment_not_found` once it expired.
    public func confirm(code: String, name: String? = nil) async throws(TrifactorError) -> EnrolledFactor {
        try await client.finishEnrollment(session, FinishEnrollmentRequest(code: code, displayName: name))
    }
}

/// A bound action (a transfer, a payee added): the server states it in the
/// challenge and binds the approval to its exact fields.
public struct BoundAction: Sendable, Equatable {
    /// The fields, `type` included.
    public let fields: [String: JSONScalar]

    public init(type: String, fields: [String: JSONScalar]) {
        var all = fields
        all["type"] = .string(type)
        self.fields = all
    }

    /// A transfer of `amount` (a decimal string, "250.00") in `currency` to `payee` from account `from`.
    public static func transfer(amount: String, currency: String, payee: String, from: String) -> BoundAction {
        BoundAction(
            type: "transfer",
            fields: [
                "amount": .string(amount), "currency": .string(currency), "payee": .string(payee),
                "from": .string(from),
            ])
    }
}

/// An authorization waiting for its proof: show `summary`, then `approve`.
public struct PendingAuthorization: Sendable {
    let client: TrifactorClient
    /// The authorization's id, which the money endpoint consumes.
    public let id: String
    /// The server's sentence for the action ("Transfer EUR 250.00 to Alice Example").
    public let summary: String
    /// The challenge (a device signs it with `actionHash`), when the factor uses one.
    public let challenge: SecondFactorChallenge
    /// The action's hash, which a device signature covers.
    public let actionHash: String?

    /// Approves with a proof of the factor.
    /// - Throws: `TrifactorError.server` `invalid_code`, `authorization_not_found` (expired or used).
    public func approve(with proof: SecondFactorProof) async throws(TrifactorError) {
        try await client.approveAuthorization(id, with: proof)
    }
}

extension TrifactorClient {
    // MARK: Factors

    /// The user's second factors.
    public func factors() async throws(TrifactorError) -> [EnrolledFactor] {
        try await authorized { token throws(TrifactorError) in
            try await connection.call("GET", "/v1/mfa/enrollments", token: token, as: EnrolledFactors.self).enrollments
        }
    }

    /// Starts enrolling a phone (E.164, or national with `country`); a code is sent to it.
    /// - Throws: `TrifactorError.server` `reauthentication_required` / `second_factor_required` (sign in or step up first),
    ///   `unverified_email`, `invalid_fields` (a fixed line), `second_factor_exists`.
    public func enrollPhone(_ number: String, country: String? = nil) async throws(TrifactorError) -> PendingEnrollment
    {
        try await beginEnrollment(StartEnrollmentRequest(kind: "phone", phone: number, country: country))
    }

    /// Starts enrolling an authenticator app: the answer carries the secret and its URI.
    public func enrollTOTP(algorithm: String? = nil, digits: Int? = nil) async throws(TrifactorError)
        -> PendingEnrollment
    {
        try await beginEnrollment(StartEnrollmentRequest(kind: "totp", algorithm: algorithm, digits: digits))
    }

    /// Enrolls a passkey made by `authenticator`.
    public func enrollPasskey(with authenticator: any PasskeyAuthenticator, name: String? = nil)
        async throws(TrifactorError) -> EnrolledFactor
    {
        let started = try await beginPasskeyEnrollment(name: name)
        let credential: CredentialJSON
        do { credential = try await authenticator.create(started.options) } catch let error as TrifactorError {
            throw error
        } catch {
            throw .presence(.failed)
        }
        return try await finishPasskeyEnrollment(started.session, credential: credential, name: name)
    }

    /// The first half of enrolling a passkey, for a backend whose browser runs `navigator.credentials.create`:
    /// the enrollment session and the options to hand to the browser.
    public func beginPasskeyEnrollment(name: String? = nil) async throws(TrifactorError) -> (
        session: String, options: CreationOptions
    ) {
        let started = try await startEnrollment(StartEnrollmentRequest(kind: "passkey", deviceName: name))
        guard let options = started.options else { throw .unexpectedResponse(status: 202) }
        return (started.enrollmentSession, options)
    }

    /// The second half: the browser's new credential (its `toJSON()` shape) for enrollment `session`.
    public func finishPasskeyEnrollment(_ session: String, credential: CredentialJSON, name: String? = nil)
        async throws(TrifactorError) -> EnrolledFactor
    {
        var finish = FinishEnrollmentRequest(displayName: name)
        finish.credential = credential
        return try await finishEnrollment(session, finish)
    }

    /// Options for a passwordless passkey sign-in (an empty allow list: the authenticator offers its discoverable passkeys).
    public func passkeySignInOptions() async throws(TrifactorError) -> RequestOptions {
        try await connection.call("POST", "/v1/sessions/passkey/options", as: PasskeyOptions.self).options
    }

    /// Signs in with a passkey alone (user verification required): an AAL2 session with methods `hwk` and `user`.
    /// - Throws: `TrifactorError.server` with `ProblemCode.passkeyRefused` for an assertion that does not verify
    ///   (an unknown or removed passkey, a wrong signature, no user verification).
    public func signIn(withPasskey assertion: CredentialJSON) async throws(TrifactorError) -> SessionInfo {
        try await adopt(
            try await connection.call("POST", "/v1/sessions/passkey", body: PasskeySignInRequest(assertion: assertion)))
    }

    /// Renames a factor ("Work laptop"): 1 to 64 characters.
    /// - Throws: `TrifactorError.server` `invalid_fields` (`display_name`), `factor_not_found`.
    public func renameFactor(_ id: String, to name: String) async throws(TrifactorError) -> EnrolledFactor {
        try await authorized { token throws(TrifactorError) in
            try await connection.call(
                "PATCH", "/v1/mfa/enrollments/\(Self.segment(id))", body: RenameFactorRequest(displayName: name),
                token: token)
        }
    }

    /// Removes a factor (needs a second factor proven in the last 5 minutes: step up first).
    public func removeFactor(_ id: String) async throws(TrifactorError) {
        try await authorized { token throws(TrifactorError) in
            _ = try await connection.raw("DELETE", "/v1/mfa/enrollments/\(Self.segment(id))", token: token)
        }
    }

    /// A new set of 10 recovery codes, shown once; the old set dies.
    public func newRecoveryCodes() async throws(TrifactorError) -> [String] {
        try await authorized { token throws(TrifactorError) in
            try await connection.call("POST", "/v1/mfa/recovery-codes", token: token, as: RecoveryCodes.self).codes
        }
    }

    // MARK: Step-up and bound actions

    /// Sends the step-up challenge of `factor` (an SMS code, a device challenge, passkey options).
    public func stepUpChallenge(_ factor: FactorHint) async throws(TrifactorError) -> SecondFactorChallenge {
        let sent: ChallengeSent = try await authorized { token throws(TrifactorError) in
            try await connection.call(
                "POST", "/v1/session/step-up", body: StepUpRequest(enrollmentID: factor.id), token: token,
                repeatable: true)
        }
        return SecondFactorChallenge(sent, hint: factor, pendingCredential: nil, client: self)
    }

    /// Raises this session to AAL2 with a proof of `factor`.
    /// - Throws: `TrifactorError.server` `invalid_code`, `too_many_attempts`.
    public func stepUp(_ factor: FactorHint, with proof: SecondFactorProof) async throws(TrifactorError)
        -> CurrentSession
    {
        var request = StepUpRequest(enrollmentID: factor.id)
        switch proof {
        case .code(let code): request.code = code
        case .deviceSignature(let signature): request.code = signature.base64EncodedString()
        case .assertion(let assertion): request.assertion = assertion
        case .approval: throw .invalidArgument("A step-up is proven with a code, a device signature or a passkey.")
        }
        return try await authorized { token throws(TrifactorError) in
            try await connection.call("POST", "/v1/session/step-up", body: request, token: token, repeatable: true)
        }
    }

    /// Describes `action` to the server, which sends its challenge (the SMS states the action).
    /// - Throws: `TrifactorError.server` `unverified_email`, `invalid_fields`.
    public func authorize(_ action: BoundAction, with factor: FactorHint) async throws(TrifactorError)
        -> PendingAuthorization
    {
        let created: AuthorizationCreated = try await authorized { token throws(TrifactorError) in
            try await connection.call(
                "POST", "/v1/authorizations",
                body: CreateAuthorizationRequest(action: action.fields, enrollmentID: factor.id), token: token,
                repeatable: true)
        }
        var sent = ChallengeSent(challenge: created.challenge, actionHash: created.actionHash)
        sent.options = created.options
        return PendingAuthorization(
            client: self, id: created.authorizationID, summary: created.summary,
            challenge: SecondFactorChallenge(sent, hint: factor, pendingCredential: nil, client: self),
            actionHash: created.actionHash)
    }

    /// "Send a new code": the challenge of pending authorization `id` again, for the same `action` (described again; any
    /// difference voids the authorization). The code sent before stops working, and the wrong codes typed for it still
    /// count: the authorization's five in all.
    /// - Throws: `TrifactorError.server` 404 `authorization_not_found` (expired, used or ended) or `factor_not_found` (its factor
    ///   was removed), 403 `authorization_mismatch` or `second_factor_frozen`, 429 `rate_limited` (no text yet: the code sent
    ///   before still works).
    public func resendAuthorization(_ id: String, for action: BoundAction, with factor: FactorHint)
        async throws(TrifactorError) -> PendingAuthorization
    {
        let created: AuthorizationCreated = try await authorized { token throws(TrifactorError) in
            try await connection.call(
                "POST", "/v1/authorizations/\(Self.segment(id))/challenges",
                body: ConsumeAuthorizationRequest(action: action.fields),
                token: token, repeatable: true)
        }
        var sent = ChallengeSent(challenge: created.challenge, actionHash: created.actionHash)
        sent.options = created.options
        return PendingAuthorization(
            client: self, id: created.authorizationID, summary: created.summary,
            challenge: SecondFactorChallenge(sent, hint: factor, pendingCredential: nil, client: self),
            actionHash: created.actionHash)
    }

    /// Spends approved authorization `id` for `action`, which must be exactly the approved one: call it
    /// just before moving the money, with the request's own action. Any difference voids the authorization.
    /// - Throws: `TrifactorError.server` 404 `authorization_not_found` (unknown, unapproved, expired or used),
    ///   403 `authorization_mismatch` (the action changed; it is now void).
    public func consumeAuthorization(_ id: String, for action: BoundAction) async throws(TrifactorError) {
        try await authorized { token throws(TrifactorError) in
            _ = try await connection.raw(
                "POST", "/v1/authorizations/\(Self.segment(id))/consume",
                body: ConsumeAuthorizationRequest(action: action.fields),
                token: token)
        }
    }

    /// Approves authorization `id` (from `authorize`, kept by id across requests, as a web backend does) with a proof.
    /// - Throws: `TrifactorError.server` `invalid_code`, `authorization_not_found` (expired or used).
    public func approveAuthorization(_ id: String, with proof: SecondFactorProof) async throws(TrifactorError) {
        let request: ApproveAuthorizationRequest
        switch proof {
        case .code(let code): request = ApproveAuthorizationRequest(code: code)
        case .deviceSignature(let signature):
            request = ApproveAuthorizationRequest(code: signature.base64EncodedString())
        case .assertion(let assertion): request = ApproveAuthorizationRequest(assertion: assertion)
        case .approval:
            throw .invalidArgument("A bound action is approved with a code, a device signature or a passkey.")
        }
        try await authorized { token throws(TrifactorError) in
            _ = try await connection.raw("POST", "/v1/authorizations/\(Self.segment(id))", body: request, token: token)
        }
    }

    // MARK: Internals

    func startEnrollment(_ request: StartEnrollmentRequest) async throws(TrifactorError) -> EnrollmentStarted {
        try await authorized { token throws(TrifactorError) in
            try await connection.call("POST", "/v1/mfa/enrollments", body: request, token: token)
        }
    }

    func beginEnrollment(_ request: StartEnrollmentRequest) async throws(TrifactorError) -> PendingEnrollment {
        let started = try await startEnrollment(request)
        return PendingEnrollment(
            client: self, session: started.enrollmentSession, maskedPhone: started.maskedPhone, secret: started.secret,
            otpauthURI: started.otpauthURI, qrSVG: started.qrSVG)
    }

    func finishEnrollment(_ session: String, _ request: FinishEnrollmentRequest) async throws(TrifactorError)
        -> EnrolledFactor
    {
        try await authorized { token throws(TrifactorError) in
            try await connection.call(
                "POST", "/v1/mfa/enrollments/\(Self.segment(session))", body: request, token: token)
        }
    }
}
