import API
import Core
import HTTP

/// A failure a service throws that Trifactor's own API answers with a
/// problem. Each feature declares its failures' problems in its routes file:
/// that is where the HTTP shape is chosen, and nowhere below.
protocol APIFailure: Error {
    var problem: APIError { get }
}

/// Trifactor's own routes (not the Vonage-compatible ones). Handlers decode,
/// call one service and encode; a service's failure becomes its problem
/// here, at the boundary. Authenticated routes get the caller established
/// once, before the handler.
struct APIRoutes {
    private(set) var router: Router
    let sessions: SessionService
    /// Runs the handlers of `idempotent` routes under their `Idempotency-Key`.
    let idempotency: Idempotency

    init(router: Router = Router(), sessions: SessionService, idempotency: Idempotency) {
        self.router = router
        self.sessions = sessions
        self.idempotency = idempotency
    }

    /// A route whose handler runs on `execution` (the database executor unless said otherwise).
    /// An `idempotent` one honours `Idempotency-Key` (a short handler that sends a message or
    /// creates a challenge, whose answer holds no secret).
    mutating func add(
        _ method: String, _ path: String, execution: Router.Execution = .database, idempotent: Bool = false,
        _ handler: @escaping @Sendable (Request) throws -> Response
    ) {
        guard idempotent else { return router.add(method, path, execution: execution, Self.answeringFailures(handler)) }
        let idempotency = idempotency
        router.add(
            method, path, execution: execution,
            Self.answeringFailures { request in
                try idempotency.run(request, operation: "\(method) \(path)", caller: "anonymous", answer: Self.problem)
                { try handler(request) }
            })
    }

    /// A route for a signed-in caller: no session (or an ended one) is a 401 before the handler runs.
    /// An `idempotent` one keeps each session's keys apart (a step-up acts on its session).
    mutating func authenticated(
        _ method: String, _ path: String, execution: Router.Execution = .database, idempotent: Bool = false,
        _ handler: @escaping @Sendable (Request, Caller) throws -> Response
    ) {
        let sessions = sessions
        let idempotency = idempotency
        add(method, path, execution: execution) { request in
            let caller = try sessions.authenticate(token: request.bearerToken, client: AuditContext(request))
            guard idempotent else { return try handler(request, caller) }
            return try idempotency.run(
                request, operation: "\(method) \(path)", caller: "session:\(caller.session.id.raw)",
                user: caller.user.id.raw, answer: Self.problem
            ) {
                try handler(request, caller)
            }
        }
    }

    /// The problem a failure is answered with (the failure itself when it is not one of the API's).
    private static func problem(_ error: any Error) -> any Error {
        (error as? any APIFailure)?.problem ?? error
    }

    /// A route with a fast path answered from memory on the HTTP thread (nil: not there; the handler runs).
    mutating func add(
        _ method: String, _ path: String, fast: @escaping @Sendable (Request) throws -> Response?,
        _ handler: @escaping @Sendable (Request) throws -> Response
    ) {
        router.add(
            method, path,
            fast: { request in
                do { return try fast(request) } catch let failure as any APIFailure { throw failure.problem }
            }, Self.answeringFailures(handler))
    }

    /// `handler` with its API failures answered as their problems.
    static func answeringFailures(_ handler: @escaping @Sendable (Request) throws -> Response) -> Router.Handler {
        { request in
            do {
                return try handler(request)
            } catch let failure as any APIFailure {
                throw failure.problem
            }
        }
    }
}

/// The problems of a refused `Idempotency-Key`.
extension IdempotencyFailure: APIFailure {
    var problem: APIError {
        switch self {
        case .invalidKey: .invalidIdempotencyKey
        case .reused: .idempotencyKeyReused
        case .inProgress: .idempotencyKeyInProgress
        case .bodyTooLarge: .idempotentBodyTooLarge
        }
    }
}

/// The problems of the failures every feature shares.
extension CommonFailure: APIFailure {
    var problem: APIError {
        switch self {
        case .invalidFields(let fields):
            .invalidFields(fields.map { Problem.InvalidParameter(name: $0.name, reason: $0.reason) })
        case .rateLimited(let wait): .rateLimited(retryAfter: wait)
        case .unavailable: .serviceUnavailable
        case .unauthenticated: .unauthenticated
        case .sessionExpired: .sessionExpired
        }
    }
}
