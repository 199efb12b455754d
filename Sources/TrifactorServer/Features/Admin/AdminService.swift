import API
import Core
import Crypto
import Foundation
import Store

/// What an operator does for users, through the admin API or on the host
/// (`trifactord users …`). Every action, reads included, is audited with
/// the actor's name (the admin key's, or `host:<login>` on the command line).
struct AdminService: Sendable {
    let transactions: Transactions
    let clock: Clock
    /// Where an erased user's pseudonym comes from (`trifactord users` takes the live source).
    var random: RandomSource = SecureRandom.source
    let outbox: Outbox
    let changes: ChangeFeed
    /// Which sessions are still live.
    let policies: SessionPolicies
    /// The test numbers the verification service uses (refreshed here after each change).
    let testBook: TestNumberBook
    /// The sessions feature's end hooks, run for each session an action ends.
    var endHooks: SessionEndHooks? = nil

    /// Who acts, as the audit log names them, and from where.
    struct Actor: Sendable {
        let name: String
        let client: AuditContext
        /// Why, in the staff member's words (the console asks for it on every action); last in the detail.
        var reason: String? = nil

        /// A staff member acting in the console: named `staff:<user id>` in the audit log, with their reason.
        static func staff(_ id: UserID, client: AuditContext, reason: String? = nil) -> Actor {
            Actor(name: "staff:\(id.raw)", client: client, reason: reason)
        }

        func event(_ kind: AuditEventKind, _ user: UserID?, _ detail: String) -> AuditEvent {
            // One line per entry: a reason's line breaks and control characters read as spaces.
            let why = reason.map {
                " reason=" + String($0.unicodeScalars.map { $0.value < 0x20 ? " " : Character($0) })
            }
            return client.event(kind, .success, userID: user, detail: "admin=\(name) \(detail)\(why ?? "")")
        }
    }

    // MARK: Reads

    /// Users matching an exact email, id or phone (a second factor's number, digits with or without +).
    func find(email: String?, id: String?, phone: String?, actor: Actor) throws -> [UserRecord] {
        let asked = [("email", email), ("id", id), ("phone", phone)].filter { $0.1 != nil }.map(\.0)
        guard asked.count == 1 else {
            throw CommonFailure.invalid("query", "must name exactly one of email, id or phone")
        }
        let now = clock.now().millis
        return try transactions.write { db in
            let users: [UserRecord]
            if let email {
                let exact = try AccountRepository.find(email: EmailAddress(email)?.value ?? email.lowercased(), on: db)
                // Support staff paste an address as the customer typed it: when no account has it exactly, those
                // whose address differs only in case (a scan, so only then).
                users = try exact.map { [$0] } ?? AccountRepository.find(emailIgnoringCase: email, on: db)
            } else if let id {
                // Ids are lower-case UUIDs; one pasted in capitals is the same id.
                users = try AccountRepository.find(id: UserID(id.lowercased()), on: db).map { [$0] } ?? []
            } else {
                let digits = String((phone ?? "").filter(\.isNumber))
                guard (6...15).contains(digits.count) else {
                    throw CommonFailure.invalid("phone", "must be 6 to 15 digits, E.164")
                }
                // Factors store a number as its digits (FactorRepository.insert).
                users = try FactorRepository.users(withPhone: digits, on: db).compactMap {
                    try AccountRepository.find(id: $0, on: db)
                }
                .sorted { $0.createdAt < $1.createdAt }
            }
            try AuditLog.append(
                actor.event(.adminRead, nil, "find \(asked[0]) matches=\(users.count)"), at: now, on: db)
            return users
        }
    }

    /// A user with their second factors and live sessions.
    func show(_ id: UserID, actor: Actor) throws -> (UserRecord, [Factor], [SessionRecord]) {
        let now = clock.now().millis
        return try transactions.write { db in
            guard let user = try AccountRepository.find(id: id, on: db) else { throw AdminFailure.userNotFound }
            try AuditLog.append(actor.event(.adminRead, id, "show"), at: now, on: db)
            return (
                user, try FactorRepository.list(id, on: db),
                policies.live(try SessionRepository.live(id, on: db), now: clock.now())
            )
        }
    }

    /// Audit entries by user, kind and time, oldest first, after `after` (a `seq`), at most `limit`.
    func audit(user: String?, kind: String?, since: Int64?, until: Int64?, after: Int64?, limit: Int, actor: Actor)
        throws -> [AuditLog.Entry]
    {
        guard (1...1000).contains(limit) else { throw CommonFailure.invalid("limit", "must be from 1 to 1000") }
        if let kind, AuditEventKind(rawValue: kind) == nil {
            throw CommonFailure.invalid("kind", "is not an audit event kind")
        }
        let now = clock.now().millis
        return try transactions.write { db in
            let entries = try AuditLog.entries(
                user: user, kind: kind, since: since, until: until, after: after, limit: limit, on: db)
            try AuditLog.append(
                actor.event(.adminRead, nil, "audit user=\(user ?? "*") kind=\(kind ?? "*") entries=\(entries.count)"),
                at: now, on: db)
            return entries
        }
    }

    // MARK: Writes

    /// Disables the account and ends its sessions: it can no longer sign in in any way.
    func disable(_ id: UserID, actor: Actor) throws -> AdminActionResult {
        try change(id, action: "disable", kind: .adminUserDisabled, actor: actor) { user, now, db in
            try AccountRepository.disable(id, at: now, on: db)
            // A reset under way ends with the account: neither its code nor its credential sets a password any more.
            try PasswordResetCodes.forget(userID: id, on: db)
            return AdminActionResult(
                userID: id.raw, action: "disable", sessionsEnded: try endSessions(id, now, db))
        }
    }

    /// Lets a disabled account sign in again.
    func enable(_ id: UserID, actor: Actor) throws -> AdminActionResult {
        try change(id, action: "enable", kind: .adminUserEnabled, actor: actor) { _, _, db in
            try AccountRepository.enable(id, on: db)
            return AdminActionResult(userID: id.raw, action: "enable")
        }
    }

    /// Marks the email verified (the operator checked it another way).
    func markEmailVerified(_ id: UserID, actor: Actor) throws -> AdminActionResult {
        try change(id, action: "verify-email", kind: .adminEmailVerified, actor: actor) { _, now, db in
            try AccountRepository.markEmailVerified(id, at: now, on: db)
            return AdminActionResult(userID: id.raw, action: "verify-email")
        }
    }

    /// Ends every live session.
    func revokeSessions(_ id: UserID, actor: Actor) throws -> AdminActionResult {
        try change(id, action: "revoke-sessions", kind: .adminSessionsRevoked, actor: actor) { _, now, db in
            AdminActionResult(
                userID: id.raw, action: "revoke-sessions", sessionsEnded: try endSessions(id, now, db))
        }
    }

    /// For a user who lost their phone: removes every second factor (device
    /// keys and passkeys included), ends every session, and emails the user.
    func resetMFA(_ id: UserID, actor: Actor) throws -> AdminActionResult {
        try change(id, action: "reset-mfa", kind: .adminMFAReset, actor: actor) { user, now, db in
            let removed = try FactorRepository.removeAll(of: id, on: db)
            // A second step locked for good (a hundred wrong proofs in a row) starts afresh with the new factors.
            try LoginThrottle.forgetSecondFactor(of: id, on: db)
            let ended = try endSessions(id, now, db)
            try outbox.enqueueEmail(
                "mfa_reset", to: user.email, language: outbox.texts.language(locale: nil, user: user.locale),
                values: [:], now: now, on: db)
            return AdminActionResult(userID: id.raw, action: "reset-mfa", sessionsEnded: ended, factorsRemoved: removed)
        }
    }

    /// Erases the account and its personal data: the user row and everything
    /// that cascades from it (sessions, factors, codes), and the messages to
    /// their email address and their phones, enrolled or being enrolled
    /// (emptied, and voided if not sent yet), but for a number another account
    /// also holds, whose messages are that account's too; the phone
    /// verifications their second factors started, and their numbers'
    /// wrong-code counts and rate-limit buckets (again but for a number
    /// another account holds); their lockout counts and the limits keyed by
    /// their id or address; the audit trail is kept but pseudonymised (a fresh id in
    /// place of theirs; addresses, user agents and details cleared, but for
    /// administrators' own entries, which say who did what).
    func delete(_ id: UserID, actor: Actor) throws -> AdminActionResult {
        let now = clock.now().millis
        let pseudonym = "erased-" + Hex.encode(random.bytes(8))
        let result = try transactions.write { db -> AdminActionResult in
            guard let user = try AccountRepository.find(id: id, on: db) else { throw AdminFailure.userNotFound }
            let ended = try SessionRepository.live(id, on: db).count
            let phones = try FactorRepository.phones(of: id, on: db) + EnrollmentRepository.phones(of: id, on: db)
            // Numbers another account also holds stay: their messages and limits are that account's too.
            let numbers = try Set(phones).union(VerifyRepository.numbers(userID: id, on: db)).filter { number in
                try !FactorRepository.isEnrolled(phone: number, otherThan: id, on: db)
                    && !EnrollmentRepository.isEnrolling(phone: number, otherThan: id, on: db)
            }
            try VerifyRepository.attribute(numbers: numbers, to: id, on: db)
            // Their verifications' audit entries written before entries named the user ("id=<verification> …"):
            // named now, then pseudonymised with the rest below.
            try AuditLog.attribute(verifications: VerifyRepository.ids(userID: id, on: db), to: id, on: db)
            try VerifyRepository.erase(userID: id, numbers: numbers, on: db)
            // A resend still queued for their address.
            try EmailResends.forget(email: user.email, on: db)
            // Limits and lockouts whose keys name them (their id, their address's hash).
            try LoginThrottle.forget(email: user.email, userID: id, on: db)
            try RateLimiter.forget("password-change:\(id.raw)", on: db)
            try RateLimiter.forget("resend:email:\(SHA256.hex(user.email))", on: db)
            for recipient in [user.email] + numbers.sorted() {
                try Outbox.erase(recipient: recipient, on: db)
            }
            // Webhook messages about them not yet delivered: their address, browser and details taken out.
            try WebhookQueue.erase(userID: id.raw, on: db)
            try AccountRepository.delete(id, on: db)
            // Administrators' own entries keep their detail (who did what; no personal data in it).
            try AuditLog.pseudonymise(id, as: pseudonym, on: db)
            // The entry keeps only the pseudonym; the webhook names the user, so that receivers can erase them too.
            try AuditLog.append(
                actor.event(.adminUserDeleted, nil, "user=\(pseudonym)"), at: now, subject: id.raw, on: db)
            return AdminActionResult(userID: id.raw, action: "delete", sessionsEnded: ended)
        }
        changes.publish("user:\(id.raw)")
        return result
    }

    // MARK: Test numbers

    /// Every test number, the configuration's and administrators'.
    func testNumbers(actor: Actor) throws -> [TestNumberBook.Entry] {
        let now = clock.now().millis
        return try transactions.write { db in
            try AuditLog.append(actor.event(.adminRead, nil, "test numbers"), at: now, on: db)
            return try TestNumberBook.list(configured: testBook.configured, on: db)
        }
    }

    /// Adds or changes a test number: starts to it never send, and `code` is their code.
    func setTestNumber(_ number: String, code: String, actor: Actor) throws -> TestNumberBook.Entry {
        var invalid: [FieldProblem] = []
        if number.first == "0" || !(7...15).contains(number.count) || !number.allSatisfy({ $0.isASCII && $0.isNumber })
        {
            invalid.append(FieldProblem(name: "number", reason: "must be 7 to 15 digits in E.164 without +"))
        }
        if !VerifyWorkflow.isValidCode(code) {
            invalid.append(FieldProblem(name: "code", reason: "must be 4 to 10 letters or digits"))
        }
        guard invalid.isEmpty else { throw CommonFailure.invalidFields(invalid) }
        guard testBook.configured[number] == nil else { throw AdminFailure.testNumberConfigured }
        let now = clock.now().millis
        try transactions.write { db in
            // A test number never sends and takes a fixed code: on a user's enrolled phone it would bypass their factor.
            if try FactorRepository.isEnrolled(phone: number, on: db) { throw AdminFailure.testNumberEnrolled }
            try TestNumberBook.set(number, code: code, now: now, on: db)
            try AuditLog.append(actor.event(.adminTestNumberSet, nil, "number=\(number)"), at: now, on: db)
            try testBook.refresh(on: db)
        }
        return TestNumberBook.Entry(number: number, code: code, source: "admin", createdAt: now)
    }

    /// Removes a test number an administrator added.
    func removeTestNumber(_ number: String, actor: Actor) throws {
        guard testBook.configured[number] == nil else { throw AdminFailure.testNumberConfigured }
        let now = clock.now().millis
        try transactions.write { db in
            guard try TestNumberBook.remove(number, on: db) else { throw AdminFailure.testNumberNotFound }
            try AuditLog.append(actor.event(.adminTestNumberRemoved, nil, "number=\(number)"), at: now, on: db)
            try testBook.refresh(on: db)
        }
    }

    private func change(
        _ id: UserID, action: String, kind: AuditEventKind, actor: Actor,
        _ body: (UserRecord, Int64, any SQLConnection) throws -> AdminActionResult
    ) throws -> AdminActionResult {
        let now = clock.now().millis
        let result = try transactions.write { db -> AdminActionResult in
            guard let user = try AccountRepository.find(id: id, on: db) else { throw AdminFailure.userNotFound }
            let result = try body(user, now, db)
            try AuditLog.append(
                actor.event(
                    kind, id, "sessions_ended=\(result.sessionsEnded) factors_removed=\(result.factorsRemoved)"),
                at: now, on: db)
            return result
        }
        changes.publish("user:\(id.raw)")
        return result
    }

    /// Ends every session of the user, and what relying parties were given on them (offline grants too, with the
    /// back-channel logout tokens of the apps that asked for them).
    private func endSessions(_ id: UserID, _ now: Int64, _ db: any SQLConnection) throws -> Int {
        try AccountLockdown.endEverything(of: id, reason: .revoked, hooks: endHooks, now: now, on: db)
    }
}

/// Refusals of the admin operations.
enum AdminFailure: Error, Equatable {
    case userNotFound
    /// A test number of the configuration: changed there, not through the API.
    case testNumberConfigured
    case testNumberNotFound
    /// A user's second factor uses this number.
    case testNumberEnrolled
}
