/// Why a WebAuthn ceremony or a piece of its data was refused.
///
/// `reason.rawValue` is the stable wire code (pinned by a test);
/// `description` is a short sentence safe to show a user. Any detail for the
/// logs lives in `debugDescription` only and never takes part in equality.
package struct WebAuthnError: Error, Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The stable reason codes.
    package enum Reason: String, Sendable, CaseIterable {
        case malformed
        case wrongType = "wrong_type"
        case challengeMismatch = "challenge_mismatch"
        case originMismatch = "origin_mismatch"
        case rpIDMismatch = "rp_id_mismatch"
        case userNotPresent = "user_not_present"
        case userNotVerified = "user_not_verified"
        case backupStateInconsistent = "backup_state_inconsistent"
        case algorithmNotAllowed = "algorithm_not_allowed"
        case unsupportedAttestation = "unsupported_attestation"
        case badSignature = "bad_signature"
        case credentialTooLong = "credential_too_long"
        case signCountRegression = "sign_count_regression"
        case unsupportedKey = "unsupported_key"
    }

    /// Why it failed.
    package let reason: Reason
    /// Internal detail for logs (never shown to users, ignored by `==`).
    let detail: String?

    /// An error for `reason`, with an optional detail for logs.
    package init(_ reason: Reason, detail: String? = nil) {
        self.reason = reason
        self.detail = detail
    }

    /// The stable wire code, the same as `reason.rawValue`.
    package var code: String { reason.rawValue }

    /// A short sentence safe to show a user.
    package var description: String {
        switch reason {
        case .malformed: "The security key response could not be read."
        case .wrongType: "The security key response is for a different ceremony."
        case .challengeMismatch: "The security key response does not answer this request."
        case .originMismatch: "The security key response comes from a site that is not allowed."
        case .rpIDMismatch: "The security key response is for a different site."
        case .userNotPresent: "The security key did not confirm that a user was present."
        case .userNotVerified: "The security key did not verify the user."
        case .backupStateInconsistent: "The security key reported an inconsistent backup state."
        case .algorithmNotAllowed: "The security key uses an algorithm that is not allowed."
        case .unsupportedAttestation: "The security key's attestation format is not supported."
        case .badSignature: "The security key's signature is not valid."
        case .credentialTooLong: "The security key's credential identifier is too long."
        case .signCountRegression: "The security key's signature counter went backwards; it may have been cloned."
        case .unsupportedKey: "The security key uses a key type that is not supported."
        }
    }

    /// The code and the internal detail, for logs.
    package var debugDescription: String {
        detail.map { "WebAuthnError(\(code)): \($0)" } ?? "WebAuthnError(\(code))"
    }

    /// Equal when the reasons are equal (the detail is for logs only).
    package static func == (lhs: WebAuthnError, rhs: WebAuthnError) -> Bool { lhs.reason == rhs.reason }
}
