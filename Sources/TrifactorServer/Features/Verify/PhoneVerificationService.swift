import Core
import Crypto
import Foundation
import Logging
import Messaging
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
    func start(
        _ s: Start, key: APIKey, client: AuditContext,
        then: (VerificationID, any SQLConnection) throws -> Void = { _, _ in }
    ) throws -> VerificationID {
        let testNumbers = testNumbers(for: key.id)
        try refuseUnreachable(s, testNumbers: testNumbers, client: client)
        do {
            if !canDeliver && s.steps.contains(where: { testNumbers[$0.to] == nil }) {
                throw PhoneVerificationFailure.deliveryUnavailable
            }
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
                        guard s.supersedesRunning, try supersede(holder, now: now, on: db) else {
                            throw PhoneVerificationFailure.concurrent(existing: holder)
                        }
                    }
                    guard try VerifyRepository.lock(lock, requestID: id, on: db) else {
                        throw PhoneVerificationFailure.concurrent(existing: nil)
                    }
                }
                let review = try limits(before: false, s, key: key, client: client, now: now, on: db)
                let code = s.customCode ?? testNumbers[s.steps[0].to] ?? random.digits(s.codeLength)
                let (workflow, _) = VerifyWorkflow.start(
                    stepCount: s.steps.count, channelTimeout: TimeInterval(s.channelTimeout), now: now)
                let record = VerifyRecord(
                    id: id, apiKeyID: key.id, brand: s.brand, locale: s.locale, steps: s.steps,
                    codeHash: Self.hash(code, id: id), clientRef: s.clientRef, workflow: workflow, version: 1,
                    userID: s.userID)
                try VerifyRepository.insert(record, on: db)
                for (index, step) in s.steps.enumerated() where testNumbers[step.to] == nil {
                    let minutes = Int((Double((s.steps.count - index) * s.channelTimeout) / 60).rounded(.up))
                    try outbox.enqueue(
                        channel: step.channel, to: step.to,
                        text: outbox.texts.code(
                            step.channel, brand: s.brand, code: code, minutes: minutes, intent: s.intent,
                            language: outbox.texts.language(locale: s.locale)),
                        ref: "verify:\(id.raw):\(index)", held: index > 0, review: review, locale: s.locale,
                        now: now.millis, on: db)
                }
                try AuditLog.append(
                    client.event(
                        .verifyStarted, .success, userID: s.userID,
                        detail:
                            "id=\(id.raw) key=\(key.apiKey) steps=\(s.steps.map(\.channel.rawValue).joined(separator: ","))"
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
    func refused(
        _ refusal: PhoneVerificationFailure, key: APIKey, client: AuditContext?, id: VerificationID? = nil,
        userID: UserID? = nil
    ) throws {
        let detail = "\(refusal.code) key=\(key.apiKey)" + (id.map { " id=\($0.raw)" } ?? "")
        let event =
            client?.event(.verifyRefused, .denied, userID: userID, detail: detail)
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
    func check(
        _ id: VerificationID, code: String, key: APIKey, client: AuditContext, now: Date, on db: any SQLConnection
    ) throws -> Bool {
        guard VerifyWorkflow.isValidCode(code) else { return false }
        guard let record = try VerifyRepository.findLocked(id, on: db), record.apiKeyID == key.id else { return false }
        let result = try apply(record, now: now, client: client, on: db) {
            try check(&$0, record, code: code, client: client, now: now, on: db)
        }
        return result.saved && result.rejection == nil
    }

    private func check(
        _ w: inout VerifyWorkflow, _ record: VerifyRecord, code: String, client: AuditContext, now: Date,
        on db: any SQLConnection
    ) throws -> [VerifyWorkflow.Action] {
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
            try AuditLog.append(
                client.event(.verifyWrongCode, .failure, userID: record.userID, detail: "id=\(record.id.raw)"),
                at: now.millis, on: db)
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

    /// What is stored: SHA-256 over the request id and the code.
    static func hash(_ code: String, id: VerificationID) -> String { SHA256.hex(id.raw + ":" + code) }
}
