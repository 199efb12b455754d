/// Resumes one continuation exactly once, whoever answers first: the platform's delegate callback, a task
/// cancellation, or a second callback that the platform sends after `cancel()`. A continuation resumed twice
/// crashes the app and one never resumed hangs its task forever; the adapters that bridge a delegate API
/// (AuthenticationServices) hand every outcome to one of these and never touch the continuation themselves.
///
/// An answer that comes before the continuation (a task cancelled before its sheet was asked for, whose
/// cancellation handler runs first) is kept and handed over at `start`, which then says not to show the sheet.
public final class OneShotResumer<Value: Sendable>: Sendable {
    /// Thrown to a second continuation given to `start`: one resumer serves one request.
    public struct AlreadyStarted: Error, Equatable {
        public init() {}
    }

    private enum State {
        case idle
        case waiting(CheckedContinuation<Value, any Error>)
        case answered(Result<Value, any Error>)
        case finished
    }

    private let state = Locked(State.idle)

    public init() {}

    /// Hands over the continuation. Returns true when the request should go ahead (show the sheet); false when an
    /// answer had already come (the continuation has it now) or this resumer was started before.
    @discardableResult
    public func start(_ continuation: CheckedContinuation<Value, any Error>) -> Bool {
        let earlier = state.withLock { s -> Result<Value, any Error>?? in
            switch s {
            case .idle:
                s = .waiting(continuation)
                return .none
            case .answered(let result):
                s = .finished
                return .some(result)
            case .waiting, .finished:
                return .some(nil)
            }
        }
        switch earlier {
        case .none: return true
        case .some(.some(let result)): continuation.resume(with: result)
        case .some(.none): continuation.resume(throwing: AlreadyStarted())
        }
        return false
    }

    /// Answers the request. Returns whether this answer is the one it gets: false for every answer after the first.
    @discardableResult
    public func resume(with result: Result<Value, any Error>) -> Bool {
        let waiting = state.withLock { s -> (continuation: CheckedContinuation<Value, any Error>?, taken: Bool) in
            switch s {
            case .idle:
                s = .answered(result)
                return (nil, true)
            case .waiting(let continuation):
                s = .finished
                return (continuation, true)
            case .answered, .finished:
                return (nil, false)
            }
        }
        waiting.continuation?.resume(with: result)  // outside the lock: resuming may run the awaiting task inline
        return waiting.taken
    }

    /// Answers with `value`.
    @discardableResult
    public func resume(returning value: Value) -> Bool { resume(with: .success(value)) }

    /// Answers with `error`.
    @discardableResult
    public func resume(throwing error: any Error) -> Bool { resume(with: .failure(error)) }

    /// Answers with `CancellationError`: for `withTaskCancellationHandler`'s `onCancel`.
    @discardableResult
    public func cancel() -> Bool { resume(throwing: CancellationError()) }

    /// Whether an answer has been given (delivered or kept for `start`).
    public var isAnswered: Bool {
        state.withLock { s in
            switch s {
            case .idle, .waiting: false
            case .answered, .finished: true
            }
        }
    }
}
