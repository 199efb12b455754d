package import Foundation

/// A phone verification as a plain value: its steps (sms, voice), the step
/// in force, and the rules that move it. No IO and no clock of its own:
/// every event carries `now`, and every change says what to do as actions.
///
/// Rules (Vonage Verify v2 semantics):
/// - Starting fires step 0. A step that times out (`channelTimeout`) fires the
///   next one, timed from the previous deadline; after the last step times
///   out the request expires. `nextWorkflow` fires the next step at once.
/// - A wrong code counts; the third ends the request (`terminated`). A right
///   code completes it. Any event on a request that is over is `notFound`.
/// - Cancelling is refused in the first 30 seconds and once a second step has fired.
package struct VerifyWorkflow: Sendable, Equatable {
    /// Where a request stands. The raw values are stored.
    package enum Status: String, Sendable, Equatable {
        case inProgress = "in_progress"
        case completed, failed, expired, cancelled
    }

    /// What the caller must do after an event.
    package enum Action: Sendable, Equatable {
        /// Deliver the message of step `index`.
        case fire(step: Int)
        /// The request is over (`status` says how): release its number and void unsent messages.
        case finish
    }

    /// Why an event was refused.
    package enum Rejection: Error, Sendable, Equatable {
        /// The request is over (completed, failed, expired, cancelled).
        case notFound
        /// A wrong code; `remaining` tries are left.
        case invalidCode(remaining: Int)
        /// The wrong code that used the last try: the request is now over.
        case tooManyAttempts
        /// Cancel within the first 30 seconds.
        case cancelTooEarly
        /// Cancel after the second step fired.
        case cancelTooLate
        /// `nextWorkflow` with no step left.
        case noMoreSteps
    }

    package static let maxWrongCodes = 3

    /// Whether `code` has the shape of a verification code: 4 to 10 ASCII letters or digits.
    package static func isValidCode(_ code: String) -> Bool {
        (4...10).contains(code.count) && code.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
    }
    package static let cancelGrace: TimeInterval = 30

    package let stepCount: Int
    package let channelTimeout: TimeInterval
    package let createdAt: Date
    package private(set) var status: Status
    /// The step fired last.
    package private(set) var currentStep: Int
    /// When the current step fired (its timer starts there).
    package private(set) var stepFiredAt: Date
    package private(set) var wrongCodes: Int

    /// A stored request, as loaded.
    package init(
        stepCount: Int, channelTimeout: TimeInterval, createdAt: Date, status: Status, currentStep: Int,
        stepFiredAt: Date, wrongCodes: Int
    ) {
        self.stepCount = stepCount
        self.channelTimeout = channelTimeout
        self.createdAt = createdAt
        self.status = status
        self.currentStep = currentStep
        self.stepFiredAt = stepFiredAt
        self.wrongCodes = wrongCodes
    }

    /// A new request with `stepCount` steps (1–3), firing step 0 at `now`.
    package static func start(stepCount: Int, channelTimeout: TimeInterval, now: Date) -> (VerifyWorkflow, [Action]) {
        precondition((1...3).contains(stepCount), "a workflow has 1 to 3 steps")
        let w = VerifyWorkflow(
            stepCount: stepCount, channelTimeout: channelTimeout, createdAt: now, status: .inProgress,
            currentStep: 0, stepFiredAt: now, wrongCodes: 0)
        return (w, [.fire(step: 0)])
    }

    /// When the current step times out (the next timer to look at).
    package var deadline: Date { stepFiredAt.addingTimeInterval(channelTimeout) }

    /// How long the code stays usable from `now` if nothing else happens:
    /// the rest of this step and every step after it.
    package func remainingLifetime(at now: Date) -> TimeInterval {
        max(0, deadline.timeIntervalSince(now) + Double(stepCount - 1 - currentStep) * channelTimeout)
    }

    /// Applies every timeout due by `now`.
    package mutating func advance(to now: Date) -> [Action] {
        var actions: [Action] = []
        while status == .inProgress && now >= deadline {
            if currentStep + 1 < stepCount {
                stepFiredAt = deadline
                currentStep += 1
                actions.append(.fire(step: currentStep))
            } else {
                status = .expired
                actions.append(.finish)
            }
        }
        return actions
    }

    /// A code was presented; `matches` is the caller's constant-time comparison.
    package mutating func check(matches: Bool, now: Date) throws(Rejection) -> [Action] {
        var actions = advance(to: now)
        guard status == .inProgress else { throw .notFound }
        if matches {
            status = .completed
            actions.append(.finish)
            return actions
        }
        wrongCodes += 1
        guard wrongCodes >= Self.maxWrongCodes else { throw .invalidCode(remaining: Self.maxWrongCodes - wrongCodes) }
        status = .failed
        throw .tooManyAttempts
    }

    /// The caller asked to cancel.
    package mutating func cancel(now: Date) throws(Rejection) -> [Action] {
        var actions = advance(to: now)
        guard status == .inProgress else { throw .notFound }
        guard now.timeIntervalSince(createdAt) >= Self.cancelGrace else { throw .cancelTooEarly }
        guard currentStep == 0 else { throw .cancelTooLate }
        status = .cancelled
        actions.append(.finish)
        return actions
    }

    /// The caller asked for the next step now.
    package mutating func nextWorkflow(now: Date) throws(Rejection) -> [Action] {
        var actions = advance(to: now)
        guard status == .inProgress else { throw .notFound }
        guard currentStep + 1 < stepCount else { throw .noMoreSteps }
        currentStep += 1
        stepFiredAt = now
        actions.append(.fire(step: currentStep))
        return actions
    }

    /// A newer request replaces this one (a second factor challenged again):
    /// it ends now, whatever the cancel rules say (they protect API callers,
    /// not Trifactor's own flows).
    package mutating func supersede(now: Date) -> [Action] {
        var actions = advance(to: now)
        guard status == .inProgress else { return actions }
        status = .cancelled
        actions.append(.finish)
        return actions
    }

    /// Step `step`'s message could not be delivered: move on to the next
    /// step now, as if it had timed out (nothing when a later step already fired).
    package mutating func deliveryFailed(step: Int, now: Date) -> [Action] {
        var actions = advance(to: now)
        guard status == .inProgress, step == currentStep, currentStep + 1 < stepCount else { return actions }
        currentStep += 1
        stepFiredAt = now
        actions.append(.fire(step: currentStep))
        return actions
    }
}
