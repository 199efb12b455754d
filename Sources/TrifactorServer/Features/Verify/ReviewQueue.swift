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
        try db.query("SELECT ref, channel, recipient, created_at FROM outbox WHERE status = 'review' ORDER BY created_at, seq LIMIT $1",
                     [.int(Int64(limit))]).map {
            let ref = try $0.text("ref").split(separator: ":")
            return Item(requestID: ref.count == 3 ? String(ref[1]) : "?", channel: try $0.text("channel"), to: try $0.text("recipient"),
                        createdAt: try $0.int("created_at"))
        }
    }

    static func release(_ id: VerificationID, now: Int64, on db: any SQLConnection) throws -> Outcome {
        let refs = try db.query("SELECT ref FROM outbox WHERE ref LIKE $1 AND status = 'review'", [.text("verify:\(id.raw):%")]).map { try $0.text("ref") }
        guard !refs.isEmpty else { return .notFound }
        guard let record = try VerifyRepository.find(id, on: db), record.workflow.status == .inProgress else {
            try db.execute("UPDATE outbox SET status = 'void', body = '' WHERE ref LIKE $1 AND status = 'review'", [.text("verify:\(id.raw):%")])
            try AuditLog.append(AuditEvent(kind: .verifyReviewDropped, outcome: .success, detail: "id=\(id.raw) ended meanwhile"), at: now, on: db)
            return .ended
        }
        var sent = 0
        for ref in refs {
            guard let index = ref.split(separator: ":").last.flatMap({ Int($0) }) else { continue }
            let due = index <= record.workflow.currentStep
            try db.execute("UPDATE outbox SET status = $2, next_attempt_at = $3, created_at = $3 WHERE ref = $1 AND status = 'review'",
                           [.text(ref), (due ? OutboxStatus.pending : .held).sql, .int(now)])
            if due { sent += 1 }
        }
        try AuditLog.append(AuditEvent(kind: .verifyReviewReleased, outcome: .success, detail: "id=\(id.raw) sent=\(sent)"), at: now, on: db)
        return .released(sent: sent)
    }

    static func drop(_ id: VerificationID, now: Int64, on db: any SQLConnection) throws -> Outcome {
        guard try db.execute("UPDATE outbox SET status = 'void', body = '' WHERE ref LIKE $1 AND status = 'review'", [.text("verify:\(id.raw):%")]) > 0 else {
            return .notFound
        }
        try AuditLog.append(AuditEvent(kind: .verifyReviewDropped, outcome: .success, detail: "id=\(id.raw)"), at: now, on: db)
        return .dropped
    }
}
