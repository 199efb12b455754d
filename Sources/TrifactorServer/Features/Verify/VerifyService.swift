import Core
import Crypto
import Foundation
import Messaging
import Phone
import Store

/// Phone verifications: each request is a `VerifyWorkflow` value loaded,
/// moved by one event and saved with an optimistic version check (a
/// concurrent change makes the transaction start over), so two instances
/// can never grant more than three tries between them.
struct VerifyService {
    /// A validated start request.
    struct Start {
        let brand: String
        let locale: String
        let steps: [VerifyRecord.Step]
        let countryCodes: [Int]
        let channelTimeout: Int
        let codeLength: Int
        let customCode: String?
        let clientRef: String?
        /// What the code confirms, said in the message (Trifactor's own flows:
        /// "Confirm transfer of EUR 250.00 to Alice Example").
        var purpose: String? = nil
    }

    private struct VersionConflict: Error {}

    let env: Environment

    // MARK: Events

    /// Starts a request; returns its id. A refused start changes nothing
    /// (its transaction rolls back: no token, no lock) but the audit entry.
    /// - Throws: `VerifyError` (429 limits, 409 a request of this key running
    ///   for a number, 503 when nothing can deliver the messages).
    func start(_ s: Start, key: APIKeys.Key, context: AuditContext) throws -> String {
        let testNumbers = env.configuration.verify.testNumbers
        do {
            if env.sender == nil && s.steps.contains(where: { testNumbers[$0.to] == nil }) { throw VerifyError.deliveryUnavailable }
            return try env.transaction { db -> String in
                let now = env.clock.now()
                let id = env.newID()
                try limits(before: true, s, key: key, context: context, now: now, on: db)
                // One running request per number and key (as a Vonage account has); the insert
                // either takes the lock or finds who holds it, even one not yet committed.
                for number in Set(s.steps.map(\.to)).sorted() {
                    let lock = "\(key.id):\(number)"
                    if try VerifyRepository.lock(lock, requestID: id, on: db) { continue }
                    if let holder = try runningRequest(holding: lock, now: now, on: db) { throw VerifyError.concurrent(existing: holder) }
                    guard try VerifyRepository.lock(lock, requestID: id, on: db) else { throw VerifyError.concurrent(existing: nil) }
                }
                try limits(before: false, s, key: key, context: context, now: now, on: db)
                let code = s.customCode ?? testNumbers[s.steps[0].to] ?? env.random.digits(s.codeLength)
                let (workflow, _) = VerifyWorkflow.start(stepCount: s.steps.count, channelTimeout: TimeInterval(s.channelTimeout), now: now)
                let record = VerifyRecord(id: id, apiKeyID: key.id, brand: s.brand, locale: s.locale, steps: s.steps,
                                          codeHash: Self.hash(code, id: id), clientRef: s.clientRef, workflow: workflow, version: 1)
                try VerifyRepository.insert(record, on: db)
                for (index, step) in s.steps.enumerated() where testNumbers[step.to] == nil {
                    let minutes = Int((Double((s.steps.count - index) * s.channelTimeout) / 60).rounded(.up))
                    try Outbox(env: env).enqueue(channel: step.channel, to: step.to, text: Self.message(step.channel, brand: s.brand, code: code, minutes: minutes, purpose: s.purpose),
                                                 ref: "verify:\(id):\(index)", held: index > 0, locale: s.locale, on: db)
                }
                try AuditLog.append(context.event(.verifyStarted, .success, detail: "id=\(id) key=\(key.apiKey) steps=\(s.steps.map(\.channel.rawValue).joined(separator: ","))"),
                                    at: now.millis, on: db)
                return id
            }
        } catch let refusal as VerifyError {
            try refused(refusal, key: key, context: context)
            throw refusal
        }
    }

    /// Audits a refused call in a transaction of its own.
    func refused(_ refusal: VerifyError, key: APIKeys.Key, context: AuditContext?, id: String? = nil) throws {
        let detail = "\(refusal.code) key=\(key.apiKey)" + (id.map { " id=\($0)" } ?? "")
        try env.audit(context?.event(.verifyRefused, .denied, detail: detail) ?? AuditEvent(kind: .verifyRefused, outcome: .denied, detail: detail))
    }

    /// Checks a code. - Throws: `VerifyError` 400, 410 or 404.
    func check(id: String, code: String, key: APIKeys.Key, context: AuditContext) throws {
        try mutate(id, key: key, context: context) { w, record, now, db in
            let matches = ConstantTime.equals(Self.hash(code, id: id), record.codeHash)
            do {
                return try w.check(matches: matches, now: now)
            } catch let rejection as VerifyWorkflow.Rejection where rejection != .notFound {
                let testNumbers = env.configuration.verify.testNumbers
                for number in record.numbers where testNumbers[number] == nil {
                    try VerifyRepository.countFailure(number: number, now: now.millis, on: db)
                }
                try AuditLog.append(context.event(.verifyWrongCode, .failure, detail: "id=\(id)"), at: now.millis, on: db)
                throw rejection
            }
        }
    }

    /// Cancels a request. - Throws: `VerifyError` 409 or 404.
    func cancel(id: String, key: APIKeys.Key, context: AuditContext) throws {
        try mutate(id, key: key, context: context) { w, _, now, _ in try w.cancel(now: now) }
    }

    /// Fires the next step now. - Throws: `VerifyError` 409 or 404.
    func nextWorkflow(id: String, key: APIKeys.Key, context: AuditContext) throws {
        try mutate(id, key: key, context: context) { w, _, now, _ in try w.nextWorkflow(now: now) }
    }

    /// Ends a request at once (a newer challenge of Trifactor's own flows replaces it).
    func supersede(id: String, key: APIKeys.Key) throws {
        do {
            try mutate(id, key: key, context: nil) { w, _, now, _ in w.supersede(now: now) }
        } catch let error as VerifyError where error.status == 404 {}
    }

    /// Requests the timer looks at per pass.
    static let dueBatch = 100

    /// Applies the timeouts due now (the durable timer); returns how many requests moved.
    @discardableResult
    func runDue() throws -> Int {
        let ids = try env.read { try VerifyRepository.due(now: env.nowMillis, limit: Self.dueBatch, on: $0) }
        for id in ids {
            do {
                try mutate(id, key: nil, context: nil) { _, _, _, _ in [] }
            } catch {
                env.logger.log("error", "verify_timer_failed", ["id": .string(id), "error": .string(String(reflecting: error))])
            }
        }
        return ids.count
    }

    /// A step's message failed for good: move on to the next step (inside the
    /// dispatcher's transaction, with the request's row locked; a concurrent
    /// change is re-read, up to 8 times).
    func deliveryFailed(ref: String, on db: any SQLConnection) throws {
        let parts = ref.split(separator: ":")
        guard parts.count == 3, parts[0] == "verify", let step = Int(parts[2]) else { return }
        try VerifyRepository.lock(id: String(parts[1]), on: db)
        for _ in 0..<8 {
            guard let record = try VerifyRepository.find(id: String(parts[1]), on: db) else { return }
            let now = env.clock.now()
            if try apply(record, now: now, context: nil, on: db, { $0.deliveryFailed(step: step, now: now) }).saved { return }
        }
        env.logger.log("error", "verify_delivery_failure_lost", ["ref": .string(ref), "detail": "changed concurrently 8 times; its timer moves it on"])
    }

    // MARK: Machinery

    private func mutate(_ id: String, key: APIKeys.Key?, context: AuditContext?,
                        _ event: (inout VerifyWorkflow, VerifyRecord, Date, any SQLConnection) throws -> [VerifyWorkflow.Action]) throws {
        for _ in 0..<8 {
            do {
                let outcome = try env.transaction { db -> VerifyError? in
                    // Racing checks wait for each other here rather than fail the version check.
                    try VerifyRepository.lock(id: id, on: db)
                    guard let record = try VerifyRepository.find(id: id, on: db), key == nil || record.apiKeyID == key?.id else {
                        if let context { try AuditLog.append(context.event(.verifyRefused, .denied, detail: "verification_not_found id=\(id)"), at: env.nowMillis, on: db) }
                        return .notFound(id)
                    }
                    let now = env.clock.now()
                    let result = try apply(record, now: now, context: context, on: db) { try event(&$0, record, now, db) }
                    guard result.saved else { throw VersionConflict() }
                    let refusal = result.rejection.map { Self.map($0, id: id) }
                    if let refusal, let context, refusal.status == 409 || refusal.status == 404 {
                        try AuditLog.append(context.event(.verifyRefused, .denied, detail: "\(refusal.code) id=\(id)"), at: now.millis, on: db)
                    }
                    return refusal
                }
                if let outcome { throw outcome }
                return
            } catch is VersionConflict {
                continue
            }
        }
        env.logger.log("error", "verify_conflict", ["id": .string(id), "detail": "changed concurrently 8 times in a row; answered 503"])
        throw APIError.serviceUnavailable
    }

    /// Moves `record` by its due timeouts and then `change` (whose rejection,
    /// if any, is returned: the workflow may have changed before it), saves it
    /// with the version check, and performs the resulting actions.
    /// - Returns: `saved` false on a version conflict (nothing saved or performed).
    private func apply(_ record: VerifyRecord, now: Date, context: AuditContext?, on db: any SQLConnection,
                       _ change: (inout VerifyWorkflow) throws -> [VerifyWorkflow.Action]) throws -> (saved: Bool, rejection: VerifyWorkflow.Rejection?) {
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
        try perform(actions, before: before, record: moved, context: context, now: now, on: db)
        return (true, rejection)
    }

    private func perform(_ actions: [VerifyWorkflow.Action], before: VerifyWorkflow.Status, record: VerifyRecord, context: AuditContext?,
                         now: Date, on db: any SQLConnection) throws {
        var all = actions
        if before == .inProgress && record.workflow.status != .inProgress && !all.contains(.finish) { all.append(.finish) }
        let audit = { (kind: AuditEventKind, outcome: AuditOutcome, detail: String) in
            let event = context?.event(kind, outcome, detail: detail) ?? AuditEvent(kind: kind, outcome: outcome, detail: detail)
            try AuditLog.append(event, at: now.millis, on: db)
        }
        for action in all {
            switch action {
            case .fire(let step):
                if step > 0 { try Outbox(env: env).release(ref: "verify:\(record.id):\(step)", on: db) }
                if step > 0 { try audit(.verifyStepFired, .success, "id=\(record.id) step=\(step) channel=\(record.steps[step].channel.rawValue)") }
            case .finish:
                try VerifyRepository.unlock(requestID: record.id, on: db)
                try Outbox(env: env).void(refs: record.steps.indices.map { "verify:\(record.id):\($0)" }, on: db)
                switch record.workflow.status {
                case .completed: try audit(.verifyCompleted, .success, "id=\(record.id)")
                case .failed: try audit(.verifyTerminated, .failure, "id=\(record.id) too many wrong codes")
                case .expired: try audit(.verifyExpired, .failure, "id=\(record.id)")
                case .cancelled: try audit(.verifyCancelled, .success, "id=\(record.id)")
                case .inProgress: break
                }
            }
        }
    }

    /// Token buckets, taken in a fixed order (so two instances never lock
    /// bucket rows in opposite orders): per IP and key `before` the
    /// concurrency check, per number (with the failure cap) and per country
    /// after it, so a refused duplicate spends nothing of the number's budget.
    private func limits(before: Bool, _ s: Start, key: APIKeys.Key, context: AuditContext, now: Date, on db: any SQLConnection) throws {
        let v = env.configuration.verify
        let ms = now.millis
        var buckets: [(String, RateLimiter.Limit)] = []
        if before {
            buckets = [("verify:ip:\(ClientKey.of(address: context.ip))", .init(burst: v.perIPBurst, rate: v.perIPRate))]
            // Trifactor's own flows are not one tenant: their users are limited per IP and number.
            if key.id != APIKeys.internalMFA.id { buckets.append(("verify:key:\(key.id)", .init(burst: v.perKeyBurst, rate: v.perKeyRate))) }
        } else {
            for number in Set(s.steps.map(\.to)).sorted() where v.testNumbers[number] == nil {
                if try VerifyRepository.failures(number: number, now: ms, on: db) >= v.maxFailuresPerNumber { throw VerifyError.rateLimited(retryAfter: 3600) }
                buckets.append(("verify:number:\(number)", .init(burst: v.perNumberBurst, rate: v.perNumberRate)))
            }
            for code in Set(s.countryCodes).sorted() { buckets.append(("verify:country:\(code)", .init(burst: v.perCountryBurst, rate: v.perCountryRate))) }
        }
        for (key, limit) in buckets {
            if let wait = try RateLimiter.take(key, limit: limit, nowMillis: ms, on: db) { throw VerifyError.rateLimited(retryAfter: wait) }
        }
    }

    /// The running request that holds `number`, after applying its due timeouts
    /// (a request that ran out lets go of the number here).
    private func runningRequest(holding lock: String, now: Date, on db: any SQLConnection) throws -> String? {
        guard let holder = try VerifyRepository.lockHolder(lock, on: db) else { return nil }
        guard let record = try VerifyRepository.find(id: holder, on: db) else {
            try VerifyRepository.unlock(requestID: holder, on: db)
            return nil
        }
        var probe = record.workflow
        _ = probe.advance(to: now)
        guard probe.status != .inProgress else { return holder }
        return try apply(record, now: now, context: nil, on: db, { _ in [] }).saved ? nil : holder
    }

    private static func map(_ rejection: VerifyWorkflow.Rejection, id: String) -> VerifyError {
        switch rejection {
        case .notFound: .notFound(id)
        case .invalidCode: .invalidCode
        case .tooManyAttempts: .tooManyAttempts
        case .cancelTooEarly: .cancelTooEarly(id)
        case .cancelTooLate: .cancelTooLate(id)
        case .noMoreSteps: .noMoreEvents
        }
    }

    /// What is stored: SHA-256 over the request id and the code.
    static func hash(_ code: String, id: String) -> String { SHA256.hex(id + ":" + code) }

    /// The text of a step: SMS names the brand and the validity; a voice call
    /// spells the code one character at a time, twice.
    static func message(_ channel: Channel, brand: String, code: String, minutes: Int, purpose: String? = nil) -> String {
        let validity = "It is valid for \(minutes) minute\(minutes == 1 ? "" : "s")."
        switch channel {
        case .voice:
            let spelled = code.map(String.init).joined(separator: ", ")
            let intro = purpose.map { "This is \(brand). \($0)." } ?? "This is \(brand)."
            return "\(intro) Your verification code is \(spelled). Again, your code is \(spelled). \(validity)"
        default:
            if let purpose { return "\(brand): \(purpose): code \(code). \(validity)" }
            return "\(brand): your verification code is \(code). \(validity)"
        }
    }
}
