import Core
import Crypto
import Foundation
import Logging
import Messaging
import Phone
import Store

/// Phone verifications (SMS, then voice): each request is a `VerifyWorkflow`
/// value loaded with its row locked, moved by one event and saved (with a
/// version check as a safety net), so two instances can never grant more
/// than three tries between them. Used by the Vonage-compatible API under
/// each client's key, and by phone factors under Trifactor's internal key.
struct PhoneVerificationService: Sendable {
    /// A validated start request.
    struct Start: Sendable {
        let brand: String
        let locale: String
        let steps: [VerifyRecord.Step]
        let countryCodes: [Int]
        let channelTimeout: Int
        let codeLength: Int
        let customCode: String?
        let clientRef: String?
        /// What the code confirms, said in the message (Trifactor's own flows:
        /// a transfer's amount and payee).
        var intent: CodeIntent = .code
        /// The user whose second factor it proves (Trifactor's own flows).
        var userID: UserID? = nil
        /// What the verification is for, in Trifactor's own flows (a sign-in,
        /// one transfer): one runs per number and scope, so a second transfer
        /// in another tab gets a code of its own and leaves the first one's
        /// valid. nil: one per number and API key, as Vonage's API has it.
        var scope: String? = nil
        /// Trifactor's own flows: a request running for the same number and
        /// scope is ended (superseded) by this start, in its transaction, so
        /// a start refused after all (rate limited, over budget) leaves it
        /// and its code alive. false: `.concurrent`, as Vonage's API has it.
        var supersedesRunning = false
    }

    let transactions: Transactions
    let clock: Clock
    let random: RandomSource
    let outbox: Outbox
    let logger: Logger
    let settings: VerifySettings
    /// Whether a message sender is configured (test numbers need none).
    let canDeliver: Bool
    /// The test numbers of the configuration and of administrators.
    let testBook: TestNumberBook

    /// The test numbers and their codes, now, for requests of `key`: none for
    /// Trifactor's own second factors, where a fixed code on an enrolled
    /// phone would let anyone who knows it pass the factor.
    func testNumbers(for key: APIKeyID) -> [String: String] {
        key == APIKey.internalMFA.id ? [:] : testBook.all
    }

    // MARK: Events

    /// Starts a request; returns its id. A refused start changes nothing
    /// (its transaction rolls back: no token, no lock) but the audit entry.
    /// - Throws: `PhoneVerificationFailure` (`.rateLimited`, `.concurrent`
    ///   for a request of this key running for a number unless
    ///   `supersedesRunning`, `.deliveryUnavailable`). `then` runs in the start's transaction with the new id (a
    ///   second factor records its challenge there, so the code sent and the code checked never part).
    func start(_ s: Start, key: APIKey, client: AuditContext,
               then: (VerificationID, any SQLConnection) throws -> Void = { _, _ in }) throws -> VerificationID {
        let testNumbers = testNumbers(for: key.id)
        try refuseUnreachable(s, testNumbers: testNumbers, client: client)
        do {
            if !canDeliver && s.steps.contains(where: { testNumbers[$0.to] == nil }) { throw PhoneVerificationFailure.deliveryUnavailable }
            let now = clock.now()
            return try transactions.write { db -> VerificationID in
                let id = VerificationID.random(using: random)
                try limits(before: true, s, key: key, client: client, now: now, on: db)
                // One running request per number and key (as a Vonage account has); the insert
                // either takes the lock or finds who holds it, even one not yet committed.
                for number in Set(s.steps.map(\.to)).sorted() {
                    let lock = s.scope.map { "\(key.id.raw):\($0):\(number)" } ?? "\(key.id.raw):\(number)"
                    if try VerifyRepository.lock(lock, requestID: id, on: db) { continue }
                    if let holder = try runningRequest(holding: lock, now: now, on: db) {
                        guard s.supersedesRunning, try supersede(holder, now: now, on: db) else { throw PhoneVerificationFailure.concurrent(existing: holder) }
                    }
                    guard try VerifyRepository.lock(lock, requestID: id, on: db) else { throw PhoneVerificationFailure.concurrent(existing: nil) }
                }
                let review = try limits(before: false, s, key: key, client: client, now: now, on: db)
                let code = s.customCode ?? testNumbers[s.steps[0].to] ?? random.digits(s.codeLength)
                let (workflow, _) = VerifyWorkflow.start(stepCount: s.steps.count, channelTimeout: TimeInterval(s.channelTimeout), now: now)
                let record = VerifyRecord(id: id, apiKeyID: key.id, brand: s.brand, locale: s.locale, steps: s.steps,
                                          codeHash: Self.hash(code, id: id), clientRef: s.clientRef, workflow: workflow, version: 1, userID: s.userID)
                try VerifyRepository.insert(record, on: db)
                for (index, step) in s.steps.enumerated() where testNumbers[step.to] == nil {
                    let minutes = Int((Double((s.steps.count - index) * s.channelTimeout) / 60).rounded(.up))
                    try outbox.enqueue(channel: step.channel, to: step.to,
                                       text: outbox.texts.code(step.channel, brand: s.brand, code: code, minutes: minutes, intent: s.intent,
                                                               language: outbox.texts.language(locale: s.locale)),
                                       ref: "verify:\(id.raw):\(index)", held: index > 0, review: review, locale: s.locale, now: now.millis, on: db)
                }
                try AuditLog.append(client.event(.verifyStarted, .success, userID: s.userID, detail: "id=\(id.raw) key=\(key.apiKey) steps=\(s.steps.map(\.channel.rawValue).joined(separator: ","))"
                                                 + (review ? " held for review" : "")), at: now.millis, on: db)
                try then(id, db)
                return id
            }
        } catch let refusal as PhoneVerificationFailure {
            try refused(refusal, key: key, client: client, userID: s.userID)
            throw refusal
        }
    }

    /// Audits a refused call in a transaction of its own.
    func refused(_ refusal: PhoneVerificationFailure, key: APIKey, client: AuditContext?, id: VerificationID? = nil, userID: UserID? = nil) throws {
        let detail = "\(refusal.code) key=\(key.apiKey)" + (id.map { " id=\($0.raw)" } ?? "")
        let event = client?.event(.verifyRefused, .denied, userID: userID, detail: detail)
            ?? AuditEvent(kind: .verifyRefused, outcome: .denied, userID: userID?.raw, detail: detail)
        try transactions.write { try AuditLog.append(event, at: clock.now().millis, on: $0) }
    }

    /// Checks a code, in a transaction of its own.
    /// - Throws: `PhoneVerificationFailure` `.invalidCode`, `.tooManyAttempts` or `.notFound`.
    func check(_ id: VerificationID, code: String, key: APIKey, client: AuditContext) throws {
        try mutate(id, key: key, client: client) { try check(&$0, $1, code: code, client: client, now: $2, on: $3) }
    }

    /// Checks a code inside the caller's transaction (a phone factor's second
    /// step commits it with the rest of its outcome): true when it completes
    /// the verification. A wrong code's count is written in that transaction.
    func check(_ id: VerificationID, code: String, key: APIKey, client: AuditContext, now: Date, on db: any SQLConnection) throws -> Bool {
        guard VerifyWorkflow.isValidCode(code) else { return false }
        try VerifyRepository.lock(id, on: db)
        guard let record = try VerifyRepository.find(id, on: db), record.apiKeyID == key.id else { return false }
        let result = try apply(record, now: now, client: client, on: db) { try check(&$0, record, code: code, client: client, now: now, on: db) }
        return result.saved && result.rejection == nil
    }

    private func check(_ w: inout VerifyWorkflow, _ record: VerifyRecord, code: String, client: AuditContext, now: Date,
                       on db: any SQLConnection) throws -> [VerifyWorkflow.Action] {
        let matches = ConstantTime.equals(Self.hash(code, id: record.id), record.codeHash)
        // Checked on a copy and written back: a do/catch around a mutation of the inout crashes Swift 6.3.1's SIL optimiser.
        var workflow = w
        let outcome = Result { try workflow.check(matches: matches, now: now) }
        w = workflow
        switch outcome {
        case .success(let actions):
            return actions
        case .failure(let rejection as VerifyWorkflow.Rejection) where rejection != .notFound:
            for number in record.numbers where testNumbers(for: record.apiKeyID)[number] == nil {
                try VerifyRepository.countFailure(number: number, now: now.millis, on: db)
            }
            try AuditLog.append(client.event(.verifyWrongCode, .failure, userID: record.userID, detail: "id=\(record.id.raw)"), at: now.millis, on: db)
            throw rejection
        case .failure(let error):
            throw error
        }
    }

    /// Cancels a request. - Throws: `PhoneVerificationFailure` `.cancelTooEarly`, `.cancelTooLate` or `.notFound`.
    func cancel(_ id: VerificationID, key: APIKey, client: AuditContext) throws {
        try mutate(id, key: key, client: client) { w, _, now, _ in try w.cancel(now: now) }
    }

    /// Fires the next step now. - Throws: `PhoneVerificationFailure` `.noMoreEvents` or `.notFound`.
    func nextWorkflow(_ id: VerificationID, key: APIKey, client: AuditContext) throws {
        try mutate(id, key: key, client: client) { w, _, now, _ in try w.nextWorkflow(now: now) }
    }

    /// Ends running request `id` at once, inside a start's transaction (a newer challenge of Trifactor's own
    /// flows replaces it; should the start be refused, both roll back). False when it changed meanwhile.
    private func supersede(_ id: VerificationID, now: Date, on db: any SQLConnection) throws -> Bool {
        try VerifyRepository.lock(id, on: db)
        guard let record = try VerifyRepository.find(id, on: db) else {
            try VerifyRepository.unlock(requestID: id, on: db)
            return true
        }
        return try apply(record, now: now, client: nil, on: db) { $0.supersede(now: now) }.saved
    }

    /// Requests the timer looks at per pass.
    static let dueBatch = 100

    /// Applies the timeouts due now (the durable timer); returns how many requests moved.
    @discardableResult
    func runDue() throws -> Int {
        let ids = try transactions.read { try VerifyRepository.due(now: clock.now().millis, limit: Self.dueBatch, on: $0) }
        for id in ids {
            do {
                try mutate(id, key: nil, client: nil) { _, _, _, _ in [] }
            } catch {
                logger.log("error", "verify_timer_failed", ["verification_id": .string(id.raw), "error": .string(String(reflecting: error))])
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
        try VerifyRepository.lock(id, on: db)
        guard let record = try VerifyRepository.find(id, on: db) else { return }
        let now = clock.now()
        if try !apply(record, now: now, client: nil, on: db, { $0.deliveryFailed(step: step, now: now) }).saved {
            logger.log("error", "verify_delivery_failure_lost", ["ref": .string(ref), "detail": "changed concurrently; its timer moves it on"])
        }
    }

    // MARK: Machinery

    private struct VersionConflict: Error {}

    /// Moves request `id` by `event` in a transaction of its own, with its row locked.
    private func mutate(_ id: VerificationID, key: APIKey?, client: AuditContext?,
                        _ event: (inout VerifyWorkflow, VerifyRecord, Date, any SQLConnection) throws -> [VerifyWorkflow.Action]) throws {
        for _ in 0..<3 {
            do {
                let refusal = try transactions.write { db -> PhoneVerificationFailure? in
                    let now = clock.now()
                    // Racing checks wait for each other here rather than fail the version check.
                    try VerifyRepository.lock(id, on: db)
                    guard let record = try VerifyRepository.find(id, on: db), key == nil || record.apiKeyID == key?.id else {
                        if let client { try AuditLog.append(client.event(.verifyRefused, .denied, detail: "verification_not_found id=\(id.raw)"), at: now.millis, on: db) }
                        return .notFound(id)
                    }
                    let result = try apply(record, now: now, client: client, on: db) { try event(&$0, record, now, db) }
                    guard result.saved else { throw VersionConflict() }
                    let refusal = result.rejection.map { PhoneVerificationFailure($0, id: id) }
                    if let refusal, let client, refusal.isConflictOrGone {
                        try AuditLog.append(client.event(.verifyRefused, .denied, userID: record.userID, detail: "\(refusal.code) id=\(id.raw)"),
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
        logger.log("error", "verify_conflict", ["verification_id": .string(id.raw), "detail": "changed concurrently 3 times in a row with its row locked"])
        throw CommonFailure.unavailable
    }

    /// Moves `record` by its due timeouts and then `change` (whose rejection,
    /// if any, is returned: the workflow may have changed before it), saves it
    /// with the version check, and performs the resulting actions.
    /// - Returns: `saved` false on a version conflict (nothing saved or performed).
    private func apply(_ record: VerifyRecord, now: Date, client: AuditContext?, on db: any SQLConnection,
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
        try perform(actions, before: before, record: moved, client: client, now: now, on: db)
        return (true, rejection)
    }

    private func perform(_ actions: [VerifyWorkflow.Action], before: VerifyWorkflow.Status, record: VerifyRecord, client: AuditContext?,
                         now: Date, on db: any SQLConnection) throws {
        var all = actions
        if before == .inProgress && record.workflow.status != .inProgress && !all.contains(.finish) { all.append(.finish) }
        let audit = { (kind: AuditEventKind, outcome: AuditOutcome, detail: String) in
            let event = client?.event(kind, outcome, userID: record.userID, detail: detail)
                ?? AuditEvent(kind: kind, outcome: outcome, userID: record.userID?.raw, detail: detail)
            try AuditLog.append(event, at: now.millis, on: db)
        }
        let id = record.id.raw
        for action in all {
            switch action {
            case .fire(let step):
                if step > 0 {
                    try outbox.release(ref: "verify:\(id):\(step)", now: now.millis, on: db)
                    try audit(.verifyStepFired, .success, "id=\(id) step=\(step) channel=\(record.steps[step].channel.rawValue)")
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

    /// Token buckets, taken in a fixed order (so two instances never lock
    /// bucket rows in opposite orders): per IP and key `before` the
    /// concurrency check, per number (with the failure cap) and per country
    /// after it, so a refused duplicate spends nothing of the number's budget.
    /// Returns true when the conversion guard holds the request's messages for review.
    @discardableResult
    private func limits(before: Bool, _ s: Start, key: APIKey, client: AuditContext, now: Date, on db: any SQLConnection) throws -> Bool {
        let v = settings
        let ms = now.millis
        var buckets: [(String, RateLimiter.Limit)] = []
        if before {
            buckets = [("verify:ip:\(client.clientKey)", .init(burst: v.perIPBurst, rate: v.perIPRate))]
            // Trifactor's own flows are not one tenant: their users are limited per IP and number.
            if key.id != APIKey.internalMFA.id { buckets.append(("verify:key:\(key.id.raw)", .init(burst: v.perKeyBurst, rate: v.perKeyRate))) }
        } else {
            for number in Set(s.steps.map(\.to)).sorted() where testNumbers(for: key.id)[number] == nil {
                if try VerifyRepository.failures(number: number, now: ms, on: db) >= v.maxFailuresPerNumber {
                    throw PhoneVerificationFailure.rateLimited(retryAfter: 3600)
                }
                buckets.append(("verify:number:\(number)", .init(burst: v.perNumberBurst, rate: v.perNumberRate)))
            }
            for code in Set(s.countryCodes).sorted() { buckets.append(("verify:country:\(code)", .init(burst: v.perCountryBurst, rate: v.perCountryRate))) }
        }
        for (key, limit) in buckets {
            if let wait = try RateLimiter.take(key, limit: limit, nowMillis: ms, on: db) { throw PhoneVerificationFailure.rateLimited(retryAfter: wait) }
        }
        return before ? false : try spend(s, testNumbers: testNumbers(for: key.id), now: ms, on: db)
    }

    /// The running request that holds `number`, after applying its due timeouts
    /// (a request that ran out lets go of the number here).
    private func runningRequest(holding lock: String, now: Date, on db: any SQLConnection) throws -> VerificationID? {
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

    /// What is stored: SHA-256 over the request id and the code.
    static func hash(_ code: String, id: VerificationID) -> String { SHA256.hex(id.raw + ":" + code) }
}
