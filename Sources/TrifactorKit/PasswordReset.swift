import API
public import Foundation

extension TrifactorClient {
    /// Asks for a password-reset code for `email`: the server emails an
    /// 8-digit code if the address is an account's, and answers the same for
    /// every address.
    /// - Throws: `TrifactorError.server` `invalid_fields` (not an email address), `rate_limited`.
    public func requestPasswordReset(email: String) async throws(TrifactorError) {
        _ = try await connection.raw(
            "POST", "/v1/accounts/password-reset", body: PasswordResetRequest(email: email), repeatable: true)
    }

    /// Enters the emailed code (as the user typed it: spaces, dashes and
    /// full-width digits are fine): the reset, with the factors one of which
    /// must be proven before the new password is set.
    /// - Throws: `TrifactorError.server` `invalid_code` (wrong, expired, used, tried too often, or no such account),
    ///   `invalid_fields` (not 8 digits: no attempt was spent), `rate_limited`.
    public func verifyPasswordReset(email: String, code: String) async throws(TrifactorError) -> PasswordReset {
        let verified: PasswordResetVerified = try await connection.call(
            "POST", "/v1/accounts/password-reset/verify",
            body: VerifyPasswordResetRequest(email: email, code: code))
        return PasswordReset(client: self, verified: verified)
    }
}

/// A password reset whose emailed code was right: prove a second factor
/// when `secondFactorRequired`, then set the new password. Nothing is signed
/// in: every session of the account ends, and the user signs in afresh.
public struct PasswordReset: Sendable {
    let client: TrifactorClient
    let credential: String
    /// The account has second factors: `complete` needs the proof of one.
    public let secondFactorRequired: Bool
    /// The factors the user may use.
    public let hints: [FactorHint]
    /// When this reset must be finished (10 minutes after the code).
    public let expiresAt: Date

    init(client: TrifactorClient, verified: PasswordResetVerified) {
        self.client = client
        credential = verified.resetCredential
        secondFactorRequired = verified.secondFactorRequired
        hints = verified.hints.map(FactorHint.init)
        expiresAt = verified.expiresAt
    }

    /// Sends the challenge of `hint`: an SMS code, a push, or a passkey request.
    /// - Throws: `TrifactorError.server` `invalid_reset_credential` once the reset expired; `rate_limited`.
    public func challenge(_ hint: FactorHint) async throws(TrifactorError) -> SecondFactorChallenge {
        let sent: ChallengeSent = try await client.connection.call(
            "POST", "/v1/accounts/password-reset/challenges",
            body: PasswordResetChallengeRequest(resetCredential: credential, enrollmentID: hint.id),
            repeatable: true)
        return SecondFactorChallenge(sent, hint: hint, pendingCredential: credential, client: client)
    }

    /// "Call me instead": after `challenge` texted a code to the phone of `hint`, a voice call speaks the same code now.
    /// - Throws: `TrifactorError.server` 409 `second_factor_unusable` when `hint` is not a phone or nothing was texted yet.
    public func callInstead(_ hint: FactorHint) async throws(TrifactorError) {
        _ = try await client.connection.raw(
            "POST", "/v1/accounts/password-reset/challenges/call",
            body: PasswordResetChallengeRequest(resetCredential: credential, enrollmentID: hint.id), repeatable: true)
    }

    /// Sets `newPassword`, with `hint` proven by `proof` when the account has second factors.
    /// - Throws: `TrifactorError.server` `invalid_fields` (`new_password` refused, or a code of the wrong shape), `second_factor_required`,
    ///   `invalid_code` (with the tries left), `attempts_exhausted` (the fifth wrong proof: the reset ended), `too_many_attempts`,
    ///   `invalid_reset_credential` (start over); `.approvalDenied` or `.expired` for a push.
    public func complete(newPassword: String, proving hint: FactorHint? = nil, with proof: SecondFactorProof? = nil)
        async throws(TrifactorError)
    {
        var request = CompletePasswordResetRequest(
            resetCredential: credential, newPassword: newPassword, enrollmentID: hint?.id)
        switch proof {
        case .code(let code)?:
            let trimmed = code.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty else { throw .invalidArgument("Enter the code.") }
            request.code = trimmed
        case .approval(let push)?:
            try await push.waitForApproval()
            request.approvalID = push.id
        case .deviceSignature(let signature)?:
            request.code = signature.base64EncodedString()
        case .assertion(let assertion)?:
            request.assertion = assertion
        case nil:
            break
        }
        _ = try await client.connection.raw("POST", "/v1/accounts/password-reset/complete", body: request)
    }
}
