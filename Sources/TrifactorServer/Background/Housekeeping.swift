import Foundation
import Sitekeys
import Store

/// Deletes rows that no longer guard anything, so that limiter and code
/// tables do not grow with every address ever tried.
enum Housekeeping {
    static let day: Int64 = 86_400_000
    /// Key of the PostgreSQL advisory lock that lets one instance at a time purge ("TFHOUSEK").
    static let lockKey: Int64 = 0x5446_484F_5553_454B

    /// Rows removed by one pass, per table.
    struct Report: Equatable {
        var rateLimits = 0
        var loginThrottle = 0
        var emailCodes = 0
        var sessions = 0
        var verifyFailures = 0
        var outbox = 0
        var webhookDeliveries = 0
        var verifyRequests = 0
        var mfa = 0
        var idempotencyKeys = 0
        var deliveryCallbacks = 0
        var resetsAndAttempts = 0
        var oidc = 0
    }

    /// One pass at `now` (milliseconds).
    /// - A rate-limit bucket untouched for a day is full again for any rate
    ///   of at least its burst per day, so forgetting it changes nothing.
    /// - A password's failure count untouched for a day and not locked is
    ///   forgotten (NIST SP 800-63B lets throttling windows end); an
    ///   account's second-step count is not: it leads to the freeze at the
    ///   policy's ceiling, however slowly it grows.
    /// - Email codes whose window ended a day ago; sessions ended 30 days ago
    ///   (the audit log keeps their story); answers kept for an
    ///   `Idempotency-Key` once their day is over; providers' callbacks
    ///   remembered for 31 days.
    ///
    /// On PostgreSQL one instance at a time purges: the pass takes a
    /// transaction-scoped advisory lock, and an instance that finds it taken
    /// skips its pass (nil). SQLite's writers are serial anyway.
    static func purge(now: Int64, dialect: SQLDialect = .sqlite, on db: any SQLConnection) throws -> Report? {
        if dialect == .postgres,
            try db.queryOne("SELECT pg_try_advisory_xact_lock($1) AS got", [.int(lockKey)])?.bool("got") != true
        {
            return nil
        }
        var report = Report()
        report.rateLimits = try db.execute("DELETE FROM rate_limits WHERE updated_at < $1", [.int(now - day)])
        // An account's second-step count (`mfa:` keys) is kept however old: it counts toward the freeze at the
        // ceiling, which one wrong proof a day must reach too, and a frozen one must stay frozen.
        report.loginThrottle = try db.execute(
            "DELETE FROM login_throttle WHERE updated_at < $1 AND locked_until < $2 AND email_key NOT LIKE 'mfa:%'",
            [.int(now - day), .int(now)])
        report.emailCodes = try db.execute("DELETE FROM email_codes WHERE window_started_at < $1", [.int(now - day)])
        report.verifyFailures = try db.execute(
            "DELETE FROM verify_number_failures WHERE window_started_at < $1", [.int(now - day)])
        report.outbox = try db.execute(
            "DELETE FROM outbox WHERE status IN ('sent', 'failed', 'void') AND created_at < $1", [.int(now - 30 * day)])
        // Delivered and failed webhook messages (their bodies already emptied) kept a month, like the outbox.
        report.webhookDeliveries = try db.execute(
            "DELETE FROM webhook_deliveries WHERE status IN ('sent', 'failed') AND created_at < $1",
            [.int(now - 30 * day)])
        report.verifyRequests = try db.execute(
            "DELETE FROM verify_requests WHERE finished_at IS NOT NULL AND finished_at < $1", [.int(now - 30 * day)])
        for (table, column) in [
            ("mfa_challenges", "created_at"), ("mfa_enrollments", "expires_at"), ("pending_credentials", "expires_at"),
            ("authorizations", "expires_at"), ("push_approvals", "expires_at"), ("passkey_logins", "created_at"),
        ] {
            report.mfa += try db.execute("DELETE FROM \(table) WHERE \(column) < $1", [.int(now - day)])
        }
        report.sessions = try db.execute(
            "DELETE FROM sessions WHERE ended_at IS NOT NULL AND ended_at < $1", [.int(now - 30 * day)])
        report.idempotencyKeys = try db.execute("DELETE FROM idempotency_keys WHERE expires_at <= $1", [.int(now)])
        // Browsers recognised for an account whose year ran out: they show the neutral sentence anyway.
        report.sessions += try SitekeyService.browsers.sweep(now: now, on: db)
        report.deliveryCallbacks = try db.execute(
            "DELETE FROM delivery_callbacks WHERE seen_at < $1", [.int(now - DeliveryRoutes.rememberedFor)])
        // Per-flow attempt counts a day old guard nothing (the flows live minutes); resets whose code and credential died a day ago.
        report.resetsAndAttempts =
            try db.execute("DELETE FROM mfa_attempts WHERE updated_at < $1", [.int(now - day)])
            + db.execute(
                "DELETE FROM password_resets WHERE expires_at < $1 AND (credential_expires_at IS NULL OR credential_expires_at < $1)",
                [.int(now - day)])
        // OpenID Provider: flows past their life (with the email typed into them), grants whose refresh token
        // died (or that were revoked) a day ago with their spent tokens, revoked access tokens past expiry, and
        // client assertions' jtis past theirs.
        report.oidc =
            try db.execute("DELETE FROM oidc_flows WHERE expires_at < $1", [.int(now)])
            + db.execute(
                """
                DELETE FROM oidc_spent_refresh_tokens WHERE grant_id IN (SELECT id FROM oidc_grants
                  WHERE COALESCE(revoked_at, refresh_expires_at, created_at) < $1)
                """, [.int(now - day)])
            + db.execute(
                "DELETE FROM oidc_grants WHERE COALESCE(revoked_at, refresh_expires_at, created_at) < $1",
                [.int(now - day)])
            + db.execute("DELETE FROM oidc_revoked_tokens WHERE expires_at < $1", [.int(now)])
            + db.execute("DELETE FROM oidc_client_assertions WHERE expires_at < $1", [.int(now)])
            // Pushed requests half an hour past their expiry: until then a used or expired link says what it was for.
            + db.execute("DELETE FROM oidc_pushed_requests WHERE expires_at < $1", [.int(now - 1_800_000)])
            + db.execute("DELETE FROM oidc_dpop_proofs WHERE expires_at < $1", [.int(now)])
            // Device codes a day past their ten minutes (until then a late poll still hears expired_token).
            + db.execute("DELETE FROM oidc_device_codes WHERE expires_at < $1", [.int(now - day)])
            // CIBA requests a day past their expiry, and the pings of those never decided (held, never to be sent).
            + db.execute("DELETE FROM oidc_backchannel_requests WHERE expires_at < $1", [.int(now - day)])
            + db.execute(
                "DELETE FROM outbox WHERE status = 'held' AND ref LIKE 'ciba:%' AND created_at < $1", [.int(now - day)])
        return report
    }
}
