/// A field of a request that is missing or invalid, and why.
package struct FieldProblem: Sendable, Equatable {
    package let name: String
    package let reason: String
    /// The password rule broken, when the field is a new password (pages say it in the user's language).
    package let violation: PasswordPolicy.Violation?

    package init(name: String, reason: String, violation: PasswordPolicy.Violation? = nil) {
        self.name = name
        self.reason = reason
        self.violation = violation
    }
}

/// Refusals any service may give. Each route group maps them, with its
/// feature's own failures, to problems of its API's shape.
package enum CommonFailure: Error, Equatable {
    /// Fields missing or invalid.
    case invalidFields([FieldProblem])
    /// A rate limit on the client, address or key: wait this many seconds.
    case rateLimited(retryAfter: Int)
    /// The database cannot be reached or stays busy.
    case unavailable
    /// No session, or one that ended.
    case unauthenticated
    /// The session's idle timeout or lifetime ran out.
    case sessionExpired

    /// One invalid field.
    package static func invalid(_ name: String, _ reason: String) -> CommonFailure {
        .invalidFields([FieldProblem(name: name, reason: reason)])
    }
}
