import Core
import Foundation
import Store

/// The numbers behind the operator console's charts, read from the real
/// tables for a window ending at `now` (ms). Each read runs on the caller's
/// connection (the console reads a dashboard's in one read-only transaction,
/// `ConsoleRoutes.charts`), returns plain values, and stays
/// bounded: the audit log is read through its index on `at` over the
/// window only; the outbox and webhook deliveries are kept 30 days by
/// housekeeping, so their reads never grow past a month.
///
/// Time buckets are whole UTC hours or days, the last one the bucket `now`
/// is in (so it is partial); a bucket without rows is there with zeros.
enum ConsoleStats {
    /// A window of buckets ending with the one `now` is in.
    enum Span: String, Sendable, CaseIterable {
        /// The last 24 hours, by the hour.
        case day
        /// The last 7 days, by the (UTC) day.
        case week

        /// One bucket's length in milliseconds.
        var bucketMillis: Int64 { self == .day ? 3_600_000 : 86_400_000 }
        /// How many buckets the window has.
        var bucketCount: Int { self == .day ? 24 : 7 }

        /// The start (ms) of each bucket, oldest first; the last holds `now`.
        func starts(now: Int64) -> [Int64] {
            let last = now / bucketMillis
            return (0..<Int64(bucketCount)).map { (last - Int64(bucketCount) + 1 + $0) * bucketMillis }
        }

        /// Where the window starts (ms): the first bucket's start.
        func since(now: Int64) -> Int64 { starts(now: now)[0] }
    }

    /// Sign-ins in one bucket, by outcome.
    ///
    /// A sign-in is one attempt at the sign-in door (password or passkey),
    /// counted once however many factors it took:
    /// - `succeeded`: a session was issued (`signin.succeeded` written when
    ///   the session is made, its detail `aal=…`). The `signin.succeeded`
    ///   written after a right password when a second factor is still due
    ///   is not counted: that sign-in counts when its session is issued, or
    ///   not at all.
    /// - `failed`: the password or passkey was refused (`signin.failed`:
    ///   wrong password, unknown email, disabled account, refused passkey).
    /// - `locked`: refused unseen because the account's password attempts
    ///   are locked (`signin.locked`; one per attempt while locked).
    ///
    /// `secondFactorFailed` counts wrong second-factor proofs (`mfa.failed`,
    /// each one, for any purpose: a sign-in's second step or a step-up); it
    /// is not part of the three outcomes, since a user's typo would count
    /// as a failed sign-in that then succeeds. A relying party's code
    /// (`oidc.code_issued`) is not a sign-in here: it rides on a session
    /// whose sign-in was already counted.
    struct SignIns: Sendable, Equatable {
        /// The bucket's start (ms).
        let start: Int64
        /// Sessions issued.
        var succeeded = 0
        /// Passwords or passkeys refused.
        var failed = 0
        /// Attempts refused unseen by a password lock.
        var locked = 0
        /// Wrong second-factor proofs (not one of the outcomes).
        var secondFactorFailed = 0
    }

    /// Attempts refused by a lock in one bucket: a password lock
    /// (`signin.locked`), a second-step lock (`mfa.locked`, including those
    /// refused while frozen), and second steps that froze (`mfa.frozen`:
    /// locked until an administrator resets them).
    struct Lockouts: Sendable, Equatable {
        /// The bucket's start (ms).
        let start: Int64
        /// Attempts refused by a password lock (`signin.locked`).
        var password = 0
        /// Attempts refused by a second-step lock (`mfa.locked`).
        var secondFactor = 0
        /// Second steps that froze (`mfa.frozen`).
        var frozen = 0
    }

    /// Sign-ins per bucket of `span` ending at `now`, oldest first, every bucket present.
    static func signIns(_ span: Span, now: Int64, on db: any SQLConnection) throws -> [SignIns] {
        let counts = try auditCounts(
            [.signInSucceeded, .signInFailed, .signInLocked, .mfaFailed], span, now: now, on: db)
        return span.starts(now: now).map { start in
            let bucket = counts[start] ?? [:]
            return SignIns(
                start: start, succeeded: bucket[.signInSucceeded] ?? 0, failed: bucket[.signInFailed] ?? 0,
                locked: bucket[.signInLocked] ?? 0, secondFactorFailed: bucket[.mfaFailed] ?? 0)
        }
    }

    /// Lockouts per bucket of `span` ending at `now`, oldest first, every bucket present.
    static func lockouts(_ span: Span, now: Int64, on db: any SQLConnection) throws -> [Lockouts] {
        let counts = try auditCounts([.signInLocked, .mfaLocked, .mfaFrozen], span, now: now, on: db)
        return span.starts(now: now).map { start in
            let bucket = counts[start] ?? [:]
            return Lockouts(
                start: start, password: bucket[.signInLocked] ?? 0, secondFactor: bucket[.mfaLocked] ?? 0,
                frozen: bucket[.mfaFrozen] ?? 0)
        }
    }

    /// Audit entries of `kinds` per bucket start and kind, from the window's start through `now` (entries
    /// stamped later, from an instance whose clock runs ahead, wait for their bucket). One range read on
    /// `audit_log_at`. A `signin.succeeded` counts only when it issued a session: not the one of a right password whose second
    /// factor is still due (`SessionService.secondFactorDue`), the rule the security page and webhooks follow too.
    static func auditCounts(
        _ kinds: [AuditEventKind], _ span: Span, now: Int64, on db: any SQLConnection
    ) throws -> [Int64: [AuditEventKind: Int]] {
        // The succeeded kind is always $4 (bound even when not asked for) so the session test can name it.
        let listed = [AuditEventKind.signInSucceeded] + kinds.filter { $0 != .signInSucceeded }
        let placeholders = listed.indices.map { "$\($0 + 4)" }.joined(separator: ", ")
        let rows = try db.query(
            """
            SELECT at / \(span.bucketMillis) AS bucket, kind, COUNT(*) AS n FROM audit_log
            WHERE at >= $1 AND at <= $2 AND kind IN (\(placeholders)) AND (kind <> $4 OR COALESCE(detail, '') <> $3)
            GROUP BY at / \(span.bucketMillis), kind
            """,
            [.int(span.since(now: now)), .int(now), .text(SessionService.secondFactorDue)]
                + listed.map { .text($0.rawValue) })
        var counts: [Int64: [AuditEventKind: Int]] = [:]
        for row in rows {
            guard let kind = AuditEventKind(rawValue: try row.text("kind")), kinds.contains(kind) else { continue }
            counts[try row.int("bucket") * span.bucketMillis, default: [:]][kind, default: 0] += Int(try row.int("n"))
        }
        return counts
    }
}
