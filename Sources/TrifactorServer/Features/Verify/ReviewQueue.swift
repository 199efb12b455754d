import Core
import Store

/// Verifications whose messages the conversion guard holds for review
/// (`TRIFACTOR_VERIFY_CONVERSION_ACTION=hold`): an operator lists them and
/// releases or drops each (`trifactord review`). Releasing sends the steps
/// that are due by now and leaves later ones to the workflow's timers; a
/// verification that ended meanwhile has its messages voided instead.
enum ReviewQueue {
    struct Item: Sendable, Equatable {
        let requestID: String
        let channel: String
        let to: String
        let createdAt: Int64
    }

    /// What a release or drop did.
    enum Outcome: Equatable { case released(sent: Int), dropped, ended, notFound }

    static func list(limit: Int, on db: any SQLConnection) throws -> [Item] {
        try Outbox.heldForReview(limit: limit, on: db).map {
            let ref = $0.ref.split(separator: ":")
            return Item(
                requestID: ref.count == 3 ? String(ref[1]) : "?", channel: $0.channel, to: $0.to,
                createdAt: $0.createdAt)
        }
    }

    static func release(_ id: VerificationID, now: Int64, on db: any SQLConnection) throws -> Outcome {
        let refs = try Outbox.heldForReview(refsStartingWith: "verify:\(id.raw):", on: db)
        guard !refs.isEmpty else { return .notFound }
        guard let record = try VerifyRepository.find(id, on: db), record.workflow.status == .inProgress else {
            try Outbox.dropReviewed(refsStartingWith: "verify:\(id.raw):", on: db)
            try AuditLog.append(
                AuditEvent(kind: .verifyReviewDropped, outcome: .success, detail: "id=\(id.raw) ended meanwhile"),
                at: now, on: db)
            return .ended
        }
        var sent = 0
        for ref in refs {
            guard let index = ref.split(separator: ":").last.flatMap({ Int($0) }) else { continue }
            let due = index <= record.workflow.currentStep
            try Outbox.releaseReviewed(ref: ref, as: due ? .pending : .held, now: now, on: db)
            if due { sent += 1 }
        }
        try AuditLog.append(
            AuditEvent(kind: .verifyReviewReleased, outcome: .success, detail: "id=\(id.raw) sent=\(sent)"), at: now,
            on: db)
        return .released(sent: sent)
    }

    static func drop(_ id: VerificationID, now: Int64, on db: any SQLConnection) throws -> Outcome {
        guard try Outbox.dropReviewed(refsStartingWith: "verify:\(id.raw):", on: db) > 0 else {
            return .notFound
        }
        try AuditLog.append(
            AuditEvent(kind: .verifyReviewDropped, outcome: .success, detail: "id=\(id.raw)"), at: now, on: db)
        return .dropped
    }
}
