import Core
import Foundation
import Messaging
import Store

/// A stored phone verification: its workflow value plus what the workflow
/// does not need to know (brand, numbers, code hash, owner).
struct VerifyRecord: Sendable {
    /// One step of the workflow, stored as `channel:digits`.
    struct Step: StoredValue, Equatable {
        let channel: Channel
        let to: String

        init(channel: Channel, to: String) {
            self.channel = channel
            self.to = to
        }

        var rawValue: String { "\(channel.rawValue):\(to)" }

        init?(rawValue: String) {
            let parts = rawValue.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, let channel = Channel(rawValue: String(parts[0])), !parts[1].isEmpty,
                parts[1].allSatisfy({ $0.isASCII && $0.isNumber })
            else { return nil }
            self.init(channel: channel, to: String(parts[1]))
        }
    }

    let id: VerificationID
    let apiKeyID: APIKeyID
    let brand: String
    let locale: String
    let steps: [Step]
    let codeHash: String
    let clientRef: String?
    var workflow: VerifyWorkflow
    let version: Int64
    /// The user whose second factor started it (nil for the Vonage-compatible API's
    /// verifications): their audit entries name them, and it goes when they are erased.
    var userID: UserID? = nil

    /// The distinct numbers of the workflow.
    var numbers: [String] { Array(Set(steps.map(\.to))).sorted() }
}

/// The `verify_requests`, `verify_locks` and `verify_number_failures` tables:
/// the verify feature's own.
enum VerifyRepository {
    static func insert(_ r: VerifyRecord, on db: any SQLConnection) throws {
        let w = r.workflow
        try db.execute(
            """
            INSERT INTO verify_requests (id, api_key_id, brand, locale, steps, channel_timeout, code_hash, client_ref, status,
              current_step, step_fired_at, next_deadline, wrong_codes, created_at, version, user_id)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, 1, $15)
            """,
            [
                r.id.sql, r.apiKeyID.sql, .text(r.brand), .text(r.locale), StoredList.encode(r.steps),
                .int(Int64(w.channelTimeout)),
                .text(r.codeHash), SQLValue(r.clientRef), .text(w.status.rawValue), .int(Int64(w.currentStep)),
                .int(w.stepFiredAt.millis),
                .int(w.deadline.millis), .int(Int64(w.wrongCodes)), .int(w.createdAt.millis), SQLValue(r.userID?.raw),
            ])
    }

    /// The stored request `id`, its row locked until the transaction ends (in
    /// the one statement that reads it), so concurrent changes wait for each
    /// other instead of failing the version check (a row lock on PostgreSQL;
    /// SQLite's write transactions are serial anyway).
    static func findLocked(_ id: VerificationID, on db: any SQLConnection) throws -> VerifyRecord? {
        try db.queryOne(
            "UPDATE verify_requests SET version = version WHERE id = $1 RETURNING \(columns)", [id.sql]
        ).map { try record(id, from: $0) }
    }

    static func find(_ id: VerificationID, on db: any SQLConnection) throws -> VerifyRecord? {
        try db.queryOne("SELECT \(columns) FROM verify_requests WHERE id = $1", [id.sql]).map {
            try record(id, from: $0)
        }
    }

    private static let columns = """
        id, api_key_id, brand, locale, steps, channel_timeout, code_hash, client_ref, status, current_step, \
        step_fired_at, wrong_codes, created_at, version, user_id
        """

    private static func record(_ id: VerificationID, from row: Row) throws -> VerifyRecord {
        let steps: [VerifyRecord.Step] = try row.list("steps")
        let statusText = try row.text("status")
        guard let status = VerifyWorkflow.Status(rawValue: statusText) else {
            throw StoreError(.decoding, detail: "verification \(id.raw) has status \(statusText.prefix(20))")
        }
        let workflow = VerifyWorkflow(
            stepCount: steps.count, channelTimeout: TimeInterval(try row.int("channel_timeout")),
            createdAt: Date(millis: try row.int("created_at")),
            status: status, currentStep: Int(try row.int("current_step")),
            stepFiredAt: Date(millis: try row.int("step_fired_at")), wrongCodes: Int(try row.int("wrong_codes")))
        return VerifyRecord(
            id: try row.id("id"), apiKeyID: try row.id("api_key_id"), brand: try row.text("brand"),
            locale: try row.text("locale"),
            steps: steps, codeHash: try row.text("code_hash"), clientRef: try row.optionalText("client_ref"),
            workflow: workflow, version: try row.int("version"),
            userID: try row.optionalText("user_id").map(UserID.init))
    }

    /// Saves the workflow if nobody else saved since `record` was read; false on such a conflict.
    static func save(_ r: VerifyRecord, now: Int64, on db: any SQLConnection) throws -> Bool {
        let w = r.workflow
        return try db.execute(
            """
            UPDATE verify_requests SET status = $3, current_step = $4, step_fired_at = $5, next_deadline = $6, wrong_codes = $7,
              finished_at = COALESCE(finished_at, $8), version = version + 1
            WHERE id = $1 AND version = $2
            """,
            [
                r.id.sql, .int(r.version), .text(w.status.rawValue), .int(Int64(w.currentStep)),
                .int(w.stepFiredAt.millis),
                .int(w.deadline.millis), .int(Int64(w.wrongCodes)), w.status == .inProgress ? .null : .int(now),
            ]) == 1
    }

    /// Running requests whose current step timed out by `now`.
    static func due(now: Int64, limit: Int, on db: any SQLConnection) throws -> [VerificationID] {
        try db.query(
            "SELECT id FROM verify_requests WHERE status = 'in_progress' AND next_deadline <= $1 ORDER BY next_deadline LIMIT $2",
            [.int(now), .int(Int64(limit))]
        ).map { try $0.id("id") }
    }

    /// The request holding `lock` (`<api key id>:<number>`), if any.
    static func lockHolder(_ lock: String, on db: any SQLConnection) throws -> VerificationID? {
        try db.queryOne("SELECT request_id FROM verify_locks WHERE number = $1", [.text(lock)])?.id("request_id")
    }

    /// Takes `lock` for `requestID`; false when another request holds it
    /// (including one that took it a moment ago in another transaction).
    static func lock(_ lock: String, requestID: VerificationID, on db: any SQLConnection) throws -> Bool {
        try db.execute(
            "INSERT INTO verify_locks (number, request_id) VALUES ($1, $2) ON CONFLICT (number) DO NOTHING",
            [.text(lock), requestID.sql]) == 1
    }

    static func unlock(requestID: VerificationID, on db: any SQLConnection) throws {
        try db.execute("DELETE FROM verify_locks WHERE request_id = $1", [requestID.sql])
    }

    /// The numbers of every verification a user's second factor started.
    static func numbers(userID: UserID, on db: any SQLConnection) throws -> Set<String> {
        Set(
            try db.query("SELECT steps FROM verify_requests WHERE user_id = $1", [userID.sql]).flatMap {
                row -> [String] in
                let steps: [VerifyRecord.Step] = try row.list("steps")
                return steps.map(\.to)
            })
    }

    /// The ids of the verifications that name `userID`.
    static func ids(userID: UserID, on db: any SQLConnection) throws -> [VerificationID] {
        try db.query("SELECT id FROM verify_requests WHERE user_id = $1", [userID.sql]).map { try $0.id("id") }
    }

    /// Whether the verification `id` has finished; false while it runs, and for one that is gone.
    static func hasFinished(_ id: VerificationID, on db: any SQLConnection) throws -> Bool {
        try db.queryOne("SELECT 1 AS finished FROM verify_requests WHERE id = $1 AND finished_at IS NOT NULL", [id.sql])
            != nil
    }

    /// Gives `userID` the second factors' verifications to `numbers` (theirs,
    /// held by no other account) that name no user: those started before
    /// verifications recorded theirs, and not found through a challenge
    /// (the migration's backfill). Then `erase` takes them too.
    static func attribute(numbers: Set<String>, to userID: UserID, on db: any SQLConnection) throws {
        for number in numbers.sorted() {
            try db.execute(
                """
                UPDATE verify_requests SET user_id = $1
                WHERE user_id IS NULL AND api_key_id = $2 AND ',' || steps || ',' LIKE $3
                """, [userID.sql, APIKey.internalMFA.id.sql, .text("%:\(number),%")])
        }
    }

    /// Erases what the verify feature holds of an erased user: the
    /// verifications their second factor started and their locks, and for
    /// `numbers` (theirs, held by no other account) the wrong-code counts
    /// and the per-number rate-limit buckets.
    static func erase(userID: UserID, numbers: Set<String>, on db: any SQLConnection) throws {
        try db.execute(
            "DELETE FROM verify_locks WHERE request_id IN (SELECT id FROM verify_requests WHERE user_id = $1)",
            [userID.sql])
        try db.execute("DELETE FROM verify_requests WHERE user_id = $1", [userID.sql])
        for number in numbers.sorted() {
            try db.execute("DELETE FROM verify_number_failures WHERE number = $1", [.text(number)])
            try RateLimiter.forget("verify:number:\(number)", on: db)
        }
    }

    /// Counts a wrong code against `number` (a window of a day that a new
    /// request does not reset); returns the count in the window.
    @discardableResult
    static func countFailure(number: String, now: Int64, on db: any SQLConnection) throws -> Int {
        let row = try db.queryOne(
            """
            INSERT INTO verify_number_failures (number, failures, window_started_at) VALUES ($1, 1, $2)
            ON CONFLICT (number) DO UPDATE SET
              failures = CASE WHEN verify_number_failures.window_started_at + $3 <= $2 THEN 1 ELSE verify_number_failures.failures + 1 END,
              window_started_at = CASE WHEN verify_number_failures.window_started_at + $3 <= $2 THEN $2 ELSE verify_number_failures.window_started_at END
            RETURNING failures
            """, [.text(number), .int(now), .int(Housekeeping.day)])
        return Int(try row?.int("failures") ?? 0)
    }

    /// Wrong codes `number` collected in its current window.
    static func failures(number: String, now: Int64, on db: any SQLConnection) throws -> Int {
        guard
            let row = try db.queryOne(
                "SELECT failures, window_started_at FROM verify_number_failures WHERE number = $1", [.text(number)]),
            try row.int("window_started_at") + Housekeeping.day > now
        else { return 0 }
        return Int(try row.int("failures"))
    }

    // MARK: Conversion per country (an SMS-pumping guard)

    /// Counts a verification started (`completed` false) or completed to `country` in the hour of `now`.
    static func countConversion(country: Int, completed: Bool, now: Int64, on db: any SQLConnection) throws {
        let column = completed ? "completed" : "started"
        try db.execute(
            """
            INSERT INTO verify_conversion (country, hour, \(column)) VALUES ($1, $2, 1)
            ON CONFLICT (country, hour) DO UPDATE SET \(column) = verify_conversion.\(column) + 1
            """, [.int(Int64(country)), .int(now / 3_600_000)])
    }

    /// Started and completed verifications to `country` in the last `hours` hours.
    static func conversion(country: Int, hours: Int, now: Int64, on db: any SQLConnection) throws -> (
        started: Int, completed: Int
    ) {
        try conversions(country: country, hours: hours, now: now, on: db).first.map { ($0.started, $0.completed) } ?? (
            0, 0
        )
    }

    /// Starts and completions in the last `hours` hours, per country calling code (one country, or all).
    static func conversions(
        country: Int? = nil, hours: Int, now: Int64,
        on db: any SQLConnection
    ) throws -> [(country: Int, started: Int, completed: Int)] {
        let since: SQLValue = .int(now / 3_600_000 - Int64(hours))
        return try db.query(
            """
            SELECT country, CAST(SUM(started) AS BIGINT) AS s, CAST(SUM(completed) AS BIGINT) AS c
            FROM verify_conversion WHERE hour > $1\(country == nil ? "" : " AND country = $2") GROUP BY country
            """, country.map { [since, .int(Int64($0))] } ?? [since]
        ).map {
            (Int(try $0.int("country")), Int(try $0.int("s")), Int(try $0.int("c")))
        }
    }
}
