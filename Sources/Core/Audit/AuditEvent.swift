import Foundation

/// Kinds of authentication events written to the append-only audit log.
/// The raw values are stored and printed: never rename one.
package enum AuditEventKind: String, Sendable, Codable, CaseIterable {
    case accountCreated = "account.created"
    case signupForExistingEmail = "account.signup_existing_email"
    case emailVerificationSent = "email.verification_sent"
    case emailVerified = "email.verified"
    case emailVerificationFailed = "email.verification_failed"
    case signInSucceeded = "signin.succeeded"
    case signInFailed = "signin.failed"
    case signInLocked = "signin.locked"
    case signInRateLimited = "signin.rate_limited"
    case passwordRehashed = "password.rehashed"
    case sessionEnded = "session.ended"
    case sessionExpired = "session.expired"
    case deliveryFailed = "delivery.failed"
    case apiKeyCreated = "api_key.created"
    case apiKeyRevoked = "api_key.revoked"
    case apiKeyRejected = "api_key.rejected"
    case verifyStarted = "verify.started"
    case verifyStepFired = "verify.step_fired"
    case verifyCompleted = "verify.completed"
    case verifyWrongCode = "verify.wrong_code"
    case verifyTerminated = "verify.terminated"
    case verifyCancelled = "verify.cancelled"
    case verifyExpired = "verify.expired"
    case verifyRefused = "verify.refused"
    case mfaEnrollmentStarted = "mfa.enrollment_started"
    case mfaEnrolled = "mfa.enrolled"
    case mfaEnrollmentFailed = "mfa.enrollment_failed"
    case mfaRemoved = "mfa.removed"
    case mfaChallengeSent = "mfa.challenge_sent"
    case mfaSucceeded = "mfa.succeeded"
    case mfaFailed = "mfa.failed"
    case mfaLocked = "mfa.locked"
    case recoveryCodesGenerated = "recovery_codes.generated"
    case recoveryCodeUsed = "recovery_code.used"
    case sessionSteppedUp = "session.stepped_up"
    case sessionRevoked = "session.revoked"
    case authorizationCreated = "authorization.created"
    case authorizationApproved = "authorization.approved"
    case authorizationFailed = "authorization.failed"
    case authorizationUsed = "authorization.used"
    case pushSent = "push.sent"
    case pushApproved = "push.approved"
    case pushDenied = "push.denied"
    case pushWrongNumber = "push.wrong_number"
    case passwordChanged = "password.changed"
    case passwordChangeFailed = "password.change_failed"
    case mfaRenamed = "mfa.renamed"
    case accountUpdated = "account.updated"
    /// A provider's delivery receipt or call event, verified and applied.
    case deliveryReceipt = "delivery.receipt"
    /// A receipt that was unsigned, mis-signed or stale: refused.
    case deliveryReceiptRefused = "delivery.receipt_refused"
    /// An operator released or dropped a verification held for review.
    case verifyReviewReleased = "verify.review_released"
    case verifyReviewDropped = "verify.review_dropped"
    /// Admin keys: made and revoked on the host, refused over HTTP.
    case adminKeyCreated = "admin_key.created"
    case adminKeyRevoked = "admin_key.revoked"
    case adminKeyRejected = "admin_key.rejected"
    /// An administrator read accounts or the audit log (the detail names what).
    case adminRead = "admin.read"
    case adminUserDisabled = "admin.user_disabled"
    case adminUserEnabled = "admin.user_enabled"
    case adminUserDeleted = "admin.user_deleted"
    case adminMFAReset = "admin.mfa_reset"
    case adminSessionsRevoked = "admin.sessions_revoked"
    case adminEmailVerified = "admin.email_verified"
    case adminTestNumberSet = "admin.test_number_set"
    case adminTestNumberRemoved = "admin.test_number_removed"
    /// A forgotten password: a code emailed, the code entered (or wrong), the new password set.
    case passwordResetRequested = "password_reset.requested"
    case passwordResetVerified = "password_reset.verified"
    case passwordResetFailed = "password_reset.failed"
    case passwordReset = "password.reset"
    /// The owner said on their security page that a sign-in or change was not theirs: password replaced, every
    /// session ended.
    case reportedNotMe = "account.reported_not_me"
    /// A sign-in, step-up, authorization or reset used up its wrong proofs and ended.
    case mfaExhausted = "mfa.exhausted"
    /// A hundred wrong second-factor proofs in a row: the second step is locked until an administrator resets it.
    case mfaFrozen = "mfa.frozen"
    /// An authorization's challenge asked for again ("Send a new code").
    case authorizationResent = "authorization.resent"
    /// OpenID Provider clients: registered (on the host, by an admin key or by the client itself), changed, removed.
    case oidcClientCreated = "oidc.client_created"
    case oidcClientUpdated = "oidc.client_updated"
    case oidcClientDeleted = "oidc.client_deleted"
    /// A relying party's sign-in: a code issued to a client, redeemed for tokens, or refused at the token endpoint.
    case oidcCodeIssued = "oidc.code_issued"
    case oidcTokensIssued = "oidc.tokens_issued"
    case oidcTokenRefused = "oidc.token_refused"
    /// A refresh token used twice: its whole family is revoked (RFC 9700 §4.14.2).
    case oidcRefreshReused = "oidc.refresh_reused"
    case oidcTokenRevoked = "oidc.token_revoked"
    case oidcConsentGranted = "oidc.consent_granted"
    case oidcSigningKeyRotated = "oidc.signing_key_rotated"
    /// The device authorization grant (RFC 8628): a device was given a code; a user code typed on `/device` was
    /// taken or refused (wrong, expired, used, or too many tries); the user approved or denied the device.
    case oidcDeviceCodeIssued = "oidc.device_code_issued"
    case oidcDeviceCodeEntered = "oidc.device_code_entered"
    case oidcDeviceCodeRefused = "oidc.device_code_refused"
    case oidcDeviceApproved = "oidc.device_approved"
    case oidcDeviceDenied = "oidc.device_denied"
    /// A client asked for a user's approval on their device (OpenID CIBA); the detail says whether a device was asked.
    case oidcBackchannelStarted = "oidc.ciba_started"
    /// A back-channel request ended without tokens: denied on the device, or refused at the token endpoint.
    case oidcBackchannelDenied = "oidc.ciba_denied"
    /// A back-channel request reached a user without a device by a text carrying a link to its approval page; the
    /// user approved it there.
    case oidcBackchannelTexted = "oidc.ciba_texted"
    case oidcBackchannelLinkApproved = "oidc.ciba_link_approved"
    /// A user chose their sitekey (the detail names the picture, never the phrase).
    case sitekeySet = "sitekey.set"
    /// A browser was recognised for an account after a sign-in with a second factor (it may show the sitekey).
    case browserRecognised = "browser.recognised"
    /// A recognised browser was forgotten (it shows the neutral sentence again).
    case browserForgotten = "browser.forgotten"
    /// Webhook endpoints: registered, changed, their secret rotated, removed (the detail names the endpoint).
    case webhookCreated = "webhook.created"
    case webhookUpdated = "webhook.updated"
    case webhookSecretRotated = "webhook.secret_rotated"
    case webhookDeleted = "webhook.deleted"
    /// An endpoint that failed every delivery for the retry period (a day by default) was disabled.
    case webhookDisabled = "webhook.disabled"
    /// One event an endpoint refused for good (a 4xx, a redirect, a refused address): skipped, the next sent.
    case webhookDeliveryFailed = "webhook.delivery_failed"
    /// A user made staff of the operator's console (or their role changed), or no longer staff: on the host.
    case staffGranted = "staff.granted"
    case staffRevoked = "staff.revoked"
    /// A console write refused to a staff member (a read-only role, a form that is not the console's own).
    case staffRefused = "staff.refused"
}

/// The outcome recorded with an event.
package enum AuditOutcome: String, Sendable, Codable {
    case success, failure, denied
}

/// One audit log entry, as written.
package struct AuditEvent: Sendable, Equatable {
    package var kind: AuditEventKind
    package var outcome: AuditOutcome
    package var userID: String?
    package var ip: String?
    package var userAgent: String?
    /// Free-form detail without secrets (never a password, code or token).
    package var detail: String?

    /// An event; `detail` must never hold a secret.
    package init(
        kind: AuditEventKind, outcome: AuditOutcome, userID: String? = nil, ip: String? = nil, userAgent: String? = nil,
        detail: String? = nil
    ) {
        self.kind = kind
        self.outcome = outcome
        self.userID = userID
        self.ip = ip
        self.userAgent = userAgent
        self.detail = detail
    }
}
