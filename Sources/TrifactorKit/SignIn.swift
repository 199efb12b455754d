import API
public import Foundation

/// The outcome of a password sign-in: a result, never an error to catch.
public enum SignInResult: Sendable {
    /// Signed in (the token is stored).
    case signedIn(SessionInfo)
    /// The user has second factors: finish with the resolver.
    case secondFactorRequired(SecondFactorResolver)
}

/// One of the user's second factors, as the server offers it for this sign-in.
public struct FactorHint: Sendable, Equatable, Identifiable {
    /// What the factor is.
    public enum Kind: Sendable, Equatable {
        /// A phone: a code by SMS, then a voice call.
        case phone(maskedNumber: String)
        /// An authenticator app.
        case totp
        /// One of the recovery codes.
        case recoveryCode
        /// A device key: a push approval with number matching, or this device's signature.
        case device
        /// A passkey.
        case passkey
        /// A kind this SDK version does not know.
        case other(String)
    }

    /// The factor's id (its `enrollment_id`).
    public let id: String
    public let kind: Kind
    /// The name the user gave it.
    public let displayName: String?

    init(_ hint: MFAHint) {
        id = hint.enrollmentID
        displayName = hint.displayName
        switch hint.kind {
        case .phone: kind = .phone(maskedNumber: hint.maskedPhone ?? "")
        case .totp: kind = .totp
        case .recoveryCode: kind = .recoveryCode
        case .device: kind = .device
        case .passkey: kind = .passkey
        default: kind = .other(hint.kind.rawValue)
        }
    }

    /// The hint of one of the user's factors (from `TrifactorClient.factors()`), for step-up and bound actions.
    public init(_ factor: EnrolledFactor) {
        self.init(
            MFAHint(
                enrollmentID: factor.enrollmentID, kind: factor.kind, displayName: factor.displayName,
                maskedPhone: factor.maskedPhone))
    }
}

/// What a challenge did, and what the user does next.
public enum SecondFactorChallenge: Sendable {
    /// A code was sent (SMS, then a voice call): ask the user for it.
    case codeSent(maskedNumber: String)
    /// Nothing to send: the user reads the code from their app or their recovery sheet.
    case enterCode
    /// A push went to the user's device: show `number`, then `resolve(hint, with: .approval(push))`.
    case push(PushApproval)
    /// A device key on this device may sign the challenge instead (`DeviceAuthenticator.signature`).
    case deviceChallenge(String)
    /// A passkey: hand the options to a `PasskeyAuthenticator`.
    case passkey(RequestOptions)
}

/// What proves the second factor.
public enum SecondFactorProof: Sendable {
    /// A code: SMS or voice, TOTP, or a recovery code.
    case code(String)
    /// A push approval: waits until the device decides.
    case approval(PushApproval)
    /// This device's signature over the challenge (DER, as `DeviceAuthenticator` makes it).
    case deviceSignature(Data)
    /// A passkey assertion.
    case assertion(CredentialJSON)
}

/// The second step of a sign-in: the hints, a way to send a challenge, and a
/// way to resolve it. A value: several may exist, each for its own sign-in.
public struct SecondFactorResolver: Sendable {
    let client: TrifactorClient
    let pendingCredential: String
    /// The factors the user may use.
    public let hints: [FactorHint]
    /// When this sign-in must be finished (5 minutes after the password).
    public let expiresAt: Date

    init(client: TrifactorClient, required: MFARequired) {
        self.client = client
        pendingCredential = required.pendingCredential
        hints = required.hints.map(FactorHint.init)
        expiresAt = required.expiresAt ?? client.clock.now.addingTimeInterval(300)
    }

    /// Sends the challenge of `hint`: an SMS code, a push, or a passkey request.
    /// - Throws: `TrifactorError.server` `invalid_pending_credential` once the sign-in expired; `rate_limited`.
    public func challenge(_ hint: FactorHint) async throws(TrifactorError) -> SecondFactorChallenge {
        let sent: ChallengeSent = try await client.connection.call(
            "POST", "/v1/mfa/sign-in/challenges",
            body: MFAChallengeRequest(pendingCredential: pendingCredential, enrollmentID: hint.id), repeatable: true)
        return SecondFactorChallenge(sent, hint: hint, pendingCredential: pendingCredential, client: client)
    }

    /// "Call me instead": after `challenge` texted a code to the phone of `hint`, a voice call speaks the same code now.
    /// - Throws: `TrifactorError.server` 409 `second_factor_unusable` when `hint` is not a phone or nothing was texted yet.
    public func callInstead(_ hint: FactorHint) async throws(TrifactorError) {
        _ = try await client.connection.raw(
            "POST", "/v1/mfa/sign-in/challenges/call",
            body: MFAChallengeRequest(pendingCredential: pendingCredential, enrollmentID: hint.id), repeatable: true)
    }

    /// Proves `hint` and signs in.
    /// - Throws: `TrifactorError.server` `invalid_code` (try again), `too_many_attempts` (with `retryAfter`),
    ///   `invalid_pending_credential` (start over); `.approvalDenied` or `.expired` for a push.
    public func resolve(_ hint: FactorHint, with proof: SecondFactorProof) async throws(TrifactorError) -> SessionInfo {
        var request = MFASignInRequest(pendingCredential: pendingCredential, enrollmentID: hint.id)
        switch proof {
        case .code(let code):
            let trimmed = code.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty else { throw .invalidArgument("Enter the code.") }
            request.code = trimmed
        case .approval(let push):
            try await push.waitForApproval()
            request.approvalID = push.id
        case .deviceSignature(let signature):
            request.code = signature.base64EncodedString()
        case .assertion(let assertion):
            request.assertion = assertion
        }
        return try await client.adopt(try await client.connection.call("POST", "/v1/sessions/mfa", body: request))
    }
}

extension SecondFactorChallenge {
    init(_ sent: ChallengeSent, hint: FactorHint, pendingCredential: String?, client: TrifactorClient) {
        if let options = sent.options {
            self = .passkey(options)
        } else if let approval = sent.approvalID, let number = sent.number, let pendingCredential {
            self = .push(
                PushApproval(client: client, id: approval, number: number, pendingCredential: pendingCredential))
        } else if case .device = hint.kind, let challenge = sent.challenge {
            self = .deviceChallenge(challenge)
        } else if case .phone(let masked) = hint.kind {
            self = .codeSent(maskedNumber: masked)
        } else {
            self = .enterCode
        }
    }
}

/// A push sent to the user's device, waiting for their decision.
public struct PushApproval: Sendable {
    let client: TrifactorClient
    /// The approval's id.
    public let id: String
    /// The number to show on this screen; the user picks it on the device.
    public let number: Int
    let pendingCredential: String

    /// The device's decision, as the server knows it now or within `wait` seconds.
    public enum State: String, Sendable { case pending, approved, denied, expired }

    /// Waits (long polls, reconnecting) until the device approved.
    /// - Throws: `.approvalDenied` (denied, or a wrong number picked), `.expired`, or a transport error.
    public func waitForApproval() async throws(TrifactorError) {
        while true {
            switch try await state(wait: 25) {
            case .approved: return
            case .denied: throw .approvalDenied
            case .expired: throw .expired
            case .pending:
                if Task.isCancelled {
                    throw .transport(TransportFailure(.cancelled, host: client.server.host ?? "the server"))
                }
            }
        }
    }

    /// One poll: the state now, or after up to `wait` seconds if it is pending.
    public func state(wait: Int = 0) async throws(TrifactorError) -> State {
        let answer: ApprovalState = try await client.connection.call(
            "GET", "/v1/mfa/sign-in/approvals/\(TrifactorClient.segment(id))",
            query: [URLQueryItem(name: "wait", value: String(max(0, min(25, wait))))],
            // In a header, not the query: a reverse proxy's access log would record the query.
            headers: ["X-Trifactor-Pending-Credential": pendingCredential], timeout: TimeInterval(wait + 15))
        guard let state = State(rawValue: answer.status) else { throw .unexpectedResponse(status: 200) }
        return state
    }
}

/// A passwordless sign-in waiting for the user's device.
public struct PushSignIn: Sendable {
    let push: PushApproval
    /// The number to show; the user picks it on the device.
    public var number: Int { push.number }

    init(client: TrifactorClient, started: PushSignInStarted) {
        push = PushApproval(
            client: client, id: started.approvalID, number: started.number, pendingCredential: started.pendingCredential
        )
    }

    /// The approval, for a page that polls its `state()` instead of waiting here.
    public var approval: PushApproval { push }

    /// Waits for the approval, then signs in (AAL1, method `hwk`).
    /// - Throws: `.approvalDenied`, `.expired`, or the server's problem.
    public func session() async throws(TrifactorError) -> SessionInfo {
        try await push.waitForApproval()
        return try await complete()
    }

    /// Signs in once `approval.state()` is `.approved` (without waiting).
    /// - Throws: `TrifactorError.server` `invalid_code` when it is not approved (yet).
    public func complete() async throws(TrifactorError) -> SessionInfo {
        let created: SessionCreated = try await push.client.connection.call(
            "POST", "/v1/sessions/push/complete",
            body: PushSignInComplete(pendingCredential: push.pendingCredential, approvalID: push.id))
        return try await push.client.adopt(created)
    }
}
