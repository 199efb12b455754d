import Core
import Store

/// The reads the console's numbers need of tables other features own, as
/// extensions of those features' repositories: the SQL of each table stays
/// with the type that owns it, and nothing here writes.

extension FactorRepository {
    /// Enrolled factors per kind, and the users having at least one of that kind. Reads every factor row (the
    /// table holds a few per user); a kind this build no longer knows is left out.
    static func enrolledByKind(on db: any SQLConnection) throws -> [Factor.Kind: (factors: Int, users: Int)] {
        var counts: [Factor.Kind: (factors: Int, users: Int)] = [:]
        for row in try db.query(
            "SELECT kind, COUNT(*) AS n, COUNT(DISTINCT user_id) AS users FROM mfa_factors GROUP BY kind")
        {
            guard let kind = Factor.Kind(rawValue: try row.text("kind")) else { continue }
            counts[kind] = (Int(try row.int("n")), Int(try row.int("users")))
        }
        return counts
    }
}

extension Outbox {
    /// Messages per provider (nil: none took them), channel, status and provider receipt (nil: none came),
    /// queued or released from `since` through `through` (ms), leaving out those held for a later step and those
    /// no longer wanted. The outbox keeps finished messages 30 days, so this reads at most a month of rows.
    static func outcomes(since: Int64, through: Int64, on db: any SQLConnection) throws -> [(
        provider: String?, channel: String, status: String, receipt: String?, count: Int
    )] {
        try db.query(
            """
            SELECT provider, channel, status, receipt_status, COUNT(*) AS n FROM outbox
            WHERE created_at >= $1 AND created_at <= $2 AND status NOT IN ('held', 'void')
            GROUP BY provider, channel, status, receipt_status
            """, [.int(since), .int(through)]
        ).map {
            (
                try $0.optionalText("provider"), try $0.text("channel"), try $0.text("status"),
                try $0.optionalText("receipt_status"), Int(try $0.int("n"))
            )
        }
    }
}

extension WebhookRepository {
    /// Per endpoint: messages waiting for another try after a failed attempt, and messages given up on that were
    /// queued since `failedSince` (ms). Endpoints with neither are absent. Delivered rows are not read.
    static func troubleCounts(failedSince: Int64, on db: any SQLConnection) throws -> [String: (
        retrying: Int, failed: Int
    )] {
        var counts: [String: (retrying: Int, failed: Int)] = [:]
        for row in try db.query(
            """
            SELECT endpoint_id,
              SUM(CASE WHEN status IN ('pending', 'sending') AND attempts > 0 THEN 1 ELSE 0 END) AS retrying,
              SUM(CASE WHEN status = 'failed' AND created_at >= $1 THEN 1 ELSE 0 END) AS failed
            FROM webhook_deliveries WHERE status IN ('pending', 'sending', 'failed') GROUP BY endpoint_id
            """, [.int(failedSince)])
        {
            let retrying = Int(try row.int("retrying"))
            let failed = Int(try row.int("failed"))
            if retrying > 0 || failed > 0 { counts[try row.text("endpoint_id")] = (retrying, failed) }
        }
        return counts
    }
}
