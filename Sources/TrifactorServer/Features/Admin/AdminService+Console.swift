import Core
import Foundation
import Store

/// What the operator's console reads beyond the admin API: the audit log newest first and the dashboard's counts.
extension AdminService {
    /// The dashboard's numbers.
    struct Counts: Sendable {
        let users: Int64
        let disabled: Int64
        let staff: Int
        /// Audit entries of the last 24 hours.
        let auditDay: Int64
    }

    /// Audit entries by user and kind, newest first, before `before` (a `seq`), at most `limit`; audited as a read.
    func auditPage(user: String?, kind: String?, before: Int64?, limit: Int, actor: Actor) throws -> [AuditLog.Entry] {
        guard (1...1000).contains(limit) else { throw CommonFailure.invalid("limit", "must be from 1 to 1000") }
        if let kind, AuditEventKind(rawValue: kind) == nil {
            throw CommonFailure.invalid("kind", "is not an audit event kind")
        }
        let now = clock.now().millis
        return try transactions.write { db in
            let entries = try AuditLog.page(user: user, kind: kind, before: before, limit: limit, on: db)
            try AuditLog.append(
                actor.event(
                    .adminRead, nil, "audit user=\(user ?? "*") kind=\(kind ?? "*") entries=\(entries.count)"),
                at: now, on: db)
            return entries
        }
    }

    /// How many accounts, disabled accounts, staff and audit entries of the last day there are (no personal data:
    /// not audited).
    func counts() throws -> Counts {
        let now = clock.now().millis
        return try transactions.read { db in
            let accounts = try AccountRepository.counts(on: db)
            return Counts(
                users: accounts.all, disabled: accounts.disabled, staff: try StaffRepository.list(on: db).count,
                auditDay: try AuditLog.count(since: now - 86_400_000, on: db))
        }
    }
}
