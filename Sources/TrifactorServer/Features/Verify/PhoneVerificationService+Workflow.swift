import Core
import Foundation
import Logging
import Messaging
import Store

/// How a request moves: loaded with its row locked, moved by its due
/// timeouts and one event, saved with a version check, and the resulting
/// actions performed (the next step's message released, the lock and the
/// messages let go when it finishes, each outcome audited).
extension PhoneVerificationService {
    private struct VersionConflict: Error {}

    /// Moves request `id` by `event` in a transaction of its own, with its row locked.
    func mutate(
        _ id: VerificationID, key: APIKey?, client: AuditContext?,
        _ event: (inout VerifyWorkflow, VerifyRecord, Date, any SQLConnection) throws -> [VerifyWorkflow.Action]
    ) throws {
        for _ in 0..<3 {
            do {
                let refusal = try transactions.write { db -> PhoneVerificationFailure? in
                    let now = clock.now()
                    // Racing checks wait for each other here rather than fail the version check.
                    guard let record = try VerifyRepository.findLocked(id, on: db),
                        key == nil || record.apiKeyID == key?.id
                    else {
                        if let client {
                            try AuditLog.append(
                                client.event(.verifyRefused, .denied, detail: "verification_not_found id=\(id.raw)"),
                                at: now.millis, on: db)
                        }
                        return .notFound(id)
                    }
                    let result = try apply(record, now: now, client: client, on: db) { try event(&$0, record, now, db) }
                    guard result.saved else { throw VersionConflict() }
                    let refusal = result.rejection.map { PhoneVerificationFailure($0, id: id) }
                    if let refusal, let client, refusal.isConflictOrGone {
                        try AuditLog.append(
                            client.event(
                                .verifyRefused, .denied, userID: record.userID, detail: "\(refusal.code) id=\(id.raw)"),
                            at: now.millis, on: db)
                    }
                    return refusal
                }
                if let refusal { throw refusal }
                return
            } catch is VersionConflict {
                continue
            }
        }
        logger.log(
            .error, "verify_conflict",
            ["verification_id": .string(id.raw), "detail": "changed concurrently 3 times in a row with its row locked"])
        throw CommonFailure.unavailable
    }

    /// Moves `record` by its due timeouts and then `change` (whose rejection,
    /// if any, is returned: the workflow may have changed before it), saves it
    /// with the version check, and performs the resulting actions.
    /// - Returns: `saved` false on a version conflict (nothing saved or performed).
    func apply(
        _ record: VerifyRecord, now: Date, client: AuditContext?, on db: any SQLConnection,
        _ change: (inout VerifyWorkflow) throws -> [VerifyWorkflow.Action]
    ) throws -> (saved: Bool, rejection: VerifyWorkflow.Rejection?) {
        var moved = record
        var w = record.workflow
        let before = w.status
        var actions = w.advance(to: now)
        var rejection: VerifyWorkflow.Rejection?
        do {
            actions += try change(&w)
        } catch let r as VerifyWorkflow.Rejection {
            rejection = r
        }
        moved.workflow = w
        guard try VerifyRepository.save(moved, now: now.millis, on: db) else { return (false, nil) }
        try perform(actions, before: before, record: moved, client: client, now: now, on: db)
        return (true, rejection)
    }

    func perform(
        _ actions: [VerifyWorkflow.Action], before: VerifyWorkflow.Status, record: VerifyRecord, client: AuditContext?,
        now: Date, on db: any SQLConnection
    ) throws {
        var all = actions
        if before == .inProgress && record.workflow.status != .inProgress && !all.contains(.finish) {
            all.append(.finish)
        }
        let audit = { (kind: AuditEventKind, outcome: AuditOutcome, detail: String) in
            let event =
                client?.event(kind, outcome, userID: record.userID, detail: detail)
                ?? AuditEvent(kind: kind, outcome: outcome, userID: record.userID?.raw, detail: detail)
            try AuditLog.append(event, at: now.millis, on: db)
        }
        let id = record.id.raw
        for action in all {
            switch action {
            case .fire(let step):
                if step > 0 {
                    try outbox.release(ref: "verify:\(id):\(step)", now: now.millis, on: db)
                    try audit(
                        .verifyStepFired, .success,
                        "id=\(id) step=\(step) channel=\(record.steps[step].channel.rawValue)")
                }
            case .finish:
                try VerifyRepository.unlock(requestID: record.id, on: db)
                try outbox.void(refs: record.steps.indices.map { "verify:\(id):\($0)" }, on: db)
                switch record.workflow.status {
                case .completed:
                    try audit(.verifyCompleted, .success, "id=\(id)")
                    try countCompleted(record, now: now.millis, on: db)
                case .failed: try audit(.verifyTerminated, .failure, "id=\(id) too many wrong codes")
                case .expired: try audit(.verifyExpired, .failure, "id=\(id)")
                case .cancelled: try audit(.verifyCancelled, .success, "id=\(id)")
                case .inProgress: break
                }
            }
        }
    }

    /// The running request that holds `number`, after applying its due timeouts
    /// (a request that ran out lets go of the number here).
    func runningRequest(holding lock: String, now: Date, on db: any SQLConnection) throws -> VerificationID? {
        guard let holder = try VerifyRepository.lockHolder(lock, on: db) else { return nil }
        guard let record = try VerifyRepository.find(holder, on: db) else {
            try VerifyRepository.unlock(requestID: holder, on: db)
            return nil
        }
        var probe = record.workflow
        _ = probe.advance(to: now)
        guard probe.status != .inProgress else { return holder }
        return try apply(record, now: now, client: nil, on: db, { _ in [] }).saved ? nil : holder
    }

    /// Ends running request `id` at once, inside a start's transaction (a newer challenge of Trifactor's own
    /// flows replaces it; should the start be refused, both roll back). False when it changed meanwhile.
    func supersede(_ id: VerificationID, now: Date, on db: any SQLConnection) throws -> Bool {
        guard let record = try VerifyRepository.findLocked(id, on: db) else {
            try VerifyRepository.unlock(requestID: id, on: db)
            return true
        }
        return try apply(record, now: now, client: nil, on: db) { $0.supersede(now: now) }.saved
    }
}
