import Core
import Foundation
import Testing

@Suite("Phone verification workflow")
struct VerifyWorkflowTests {
    let t0 = Date(timeIntervalSince1970: 1_000_000)
    func at(_ seconds: TimeInterval) -> Date { t0.addingTimeInterval(seconds) }

    @Test("starting fires the first step; each timeout fires the next; after the last the request expires")
    func timeouts() {
        var (w, actions) = VerifyWorkflow.start(stepCount: 3, channelTimeout: 60, now: t0)
        #expect(actions == [.fire(step: 0)])
        #expect(w.advance(to: at(59.999)) == [])
        #expect(w.advance(to: at(60)) == [.fire(step: 1)])
        #expect(w.advance(to: at(119)) == [])
        #expect(w.advance(to: at(120)) == [.fire(step: 2)])
        #expect(w.advance(to: at(179.999)) == [])
        #expect(w.status == .inProgress)
        #expect(w.advance(to: at(180)) == [.finish])
        #expect(w.status == .expired)
    }

    @Test("a late look applies every timeout that is due, each timed from the previous deadline")
    func lateTimer() {
        var (w, _) = VerifyWorkflow.start(stepCount: 2, channelTimeout: 300, now: t0)
        #expect(w.advance(to: at(400)) == [.fire(step: 1)])
        #expect(w.stepFiredAt == at(300))
        #expect(w.remainingLifetime(at: at(400)) == 200)
        var (v, _) = VerifyWorkflow.start(stepCount: 2, channelTimeout: 300, now: t0)
        #expect(v.advance(to: at(10_000)) == [.fire(step: 1), .finish])
    }

    @Test("the right code completes; a check after that is not found")
    func complete() throws {
        var (w, _) = VerifyWorkflow.start(stepCount: 1, channelTimeout: 300, now: t0)
        #expect(try w.check(matches: true, now: at(5)) == [.finish])
        #expect(w.status == .completed)
        #expect(throws: VerifyWorkflow.Rejection.notFound) { try w.check(matches: true, now: at(6)) }
    }

    @Test("two wrong codes are refused; the third ends the request; a fourth is not found")
    func attempts() {
        var (w, _) = VerifyWorkflow.start(stepCount: 2, channelTimeout: 300, now: t0)
        #expect(throws: VerifyWorkflow.Rejection.invalidCode(remaining: 2)) { try w.check(matches: false, now: at(1)) }
        #expect(throws: VerifyWorkflow.Rejection.invalidCode(remaining: 1)) { try w.check(matches: false, now: at(2)) }
        #expect(throws: VerifyWorkflow.Rejection.tooManyAttempts) { try w.check(matches: false, now: at(3)) }
        #expect(w.status == .failed)
        #expect(throws: VerifyWorkflow.Rejection.notFound) { try w.check(matches: true, now: at(4)) }
    }

    @Test("a code presented at the last step's deadline is too late")
    func lastSecond() throws {
        var (w, _) = VerifyWorkflow.start(stepCount: 1, channelTimeout: 60, now: t0)
        var early = w
        #expect(try early.check(matches: true, now: at(59.999)) == [.finish])
        #expect(throws: VerifyWorkflow.Rejection.notFound) { try w.check(matches: true, now: at(60)) }
        #expect(w.status == .expired)
    }

    @Test("cancel is refused at 29 s and allowed at 30 s")
    func cancelGrace() throws {
        var (w, _) = VerifyWorkflow.start(stepCount: 2, channelTimeout: 300, now: t0)
        #expect(throws: VerifyWorkflow.Rejection.cancelTooEarly) { try w.cancel(now: at(29.999)) }
        #expect(try w.cancel(now: at(30)) == [.finish])
        #expect(w.status == .cancelled)
    }

    @Test("cancel is refused once the second step has fired, by timeout or on request")
    func cancelTooLate() throws {
        var (w, _) = VerifyWorkflow.start(stepCount: 2, channelTimeout: 60, now: t0)
        #expect(throws: VerifyWorkflow.Rejection.cancelTooLate) { try w.cancel(now: at(61)) }
        var (v, _) = VerifyWorkflow.start(stepCount: 2, channelTimeout: 300, now: t0)
        #expect(try v.nextWorkflow(now: at(5)) == [.fire(step: 1)])
        #expect(throws: VerifyWorkflow.Rejection.cancelTooLate) { try v.cancel(now: at(40)) }
    }

    @Test("next workflow fires the next step now and restarts its timer; with no step left it is refused")
    func nextWorkflow() throws {
        var (w, _) = VerifyWorkflow.start(stepCount: 2, channelTimeout: 300, now: t0)
        #expect(try w.nextWorkflow(now: at(10)) == [.fire(step: 1)])
        #expect(w.deadline == at(310))
        #expect(throws: VerifyWorkflow.Rejection.noMoreSteps) { try w.nextWorkflow(now: at(11)) }
        #expect(w.advance(to: at(310)) == [.finish])
    }

    @Test("a failed delivery moves to the next step once; a stale failure changes nothing")
    func deliveryFailure() {
        var (w, _) = VerifyWorkflow.start(stepCount: 3, channelTimeout: 300, now: t0)
        #expect(w.deliveryFailed(step: 0, now: at(2)) == [.fire(step: 1)])
        #expect(w.deliveryFailed(step: 0, now: at(3)) == [])
        #expect(w.deliveryFailed(step: 1, now: at(4)) == [.fire(step: 2)])
        #expect(w.deliveryFailed(step: 2, now: at(5)) == [])
        #expect(w.status == .inProgress)
    }
}
