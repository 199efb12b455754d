/// A field of a request that is missing or invalid, and why.
struct FieldProblem: Sendable, Equatable {
    let name: String
    let reason: String
}

/// Refusals any service may give. Each route group maps them, with its
/// feature's own failures, to problems of its API's shape.
enum CommonFailure: Error, Equatable {
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
    static func invalid(_ name: String, _ reason: String) -> CommonFailure { .invalidFields([FieldProblem(name: name, reason: reason)]) }
}
