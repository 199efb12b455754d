import Core
import Foundation
import Logging
import Store

/// What moves a request without a client's call: its deadlines, applied by
/// the durable timer (`runDue`), and a step's message that failed for good.
extension PhoneVerificationService {
    /// Requests the timer looks at per pass.
    static let dueBatch = 100

    /// Applies the timeouts due now (the durable timer); returns how many requests moved.
    @discardableResult
    func runDue() throws -> Int {
        let ids = try transactions.read {
            try VerifyRepository.due(now: clock.now().millis, limit: Self.dueBatch, on: $0)
        }
        for id in ids {
            do {
                try mutate(id, key: nil, client: nil) { _, _, _, _ in [] }
            } catch {
                logger.log(
                    .error, "verify_timer_failed",
                    ["verification_id": .string(id.raw), "error": .string(String(reflecting: error))])
            }
        }
        return ids.count
    }

    /// A step's message failed for good: move on to the next step (inside the
    /// dispatcher's transaction, with the request's row locked).
    func deliveryFailed(ref: String, on db: any SQLConnection) throws {
        let parts = ref.split(separator: ":")
        guard parts.count == 3, parts[0] == "verify", let step = Int(parts[2]) else { return }
        let id = VerificationID(String(parts[1]))
        guard let record = try VerifyRepository.findLocked(id, on: db) else { return }
        let now = clock.now()
        if try !apply(record, now: now, client: nil, on: db, { $0.deliveryFailed(step: step, now: now) }).saved {
            logger.log(
                .error, "verify_delivery_failure_lost",
                ["ref": .string(ref), "detail": "changed concurrently; its timer moves it on"])
        }
    }
}
