/// A push approval's state.
package enum ApprovalStatus: String, Sendable {
    case pending, approved, denied
}

/// A bound action's authorization: approved once, used once, or voided by a changed action.
package enum AuthorizationState: String, Sendable {
    case pending, approved, used, void
}

/// Why a session ended.
package enum SessionEndReason: String, Sendable {
    case signedOut = "signed_out"
    case expired
    case revoked
    /// The user's first second factor ended their password-only sessions.
    case secondFactorEnrolled = "second_factor_enrolled"
    /// The password changed: every other session ended.
    case passwordChanged = "password_changed"
    /// A new sign-in went past the user's session limit: the oldest ended.
    case limit = "session_limit"
    /// The password was reset: every session ended.
    case passwordReset = "password_reset"
    /// The owner said on their security page that a sign-in or change was not theirs: every session ended.
    case reportedNotMe = "reported_not_me"
    /// A step-up used up its wrong proofs: the session ended.
    case attemptsExhausted = "attempts_exhausted"
}

/// Where an outbox message is (see the server's `Outbox`).
package enum OutboxStatus: String, Sendable {
    case held, pending, sending, sent, failed, void
    /// Held for an operator's review (a country whose codes stopped being entered): `trifactord review`.
    case review
}
