package import Foundation
import Store

/// Statements, read from each account's side, a page at a time both ways,
/// and the audit of the books.
extension Ledger {
    /// One line of a statement.
    package struct Entry: Sendable, Equatable {
        package let id: Int64
        package let transferID: String
        /// Positive money in, negative money out.
        package let amount: Amount
        package let balanceAfter: Amount
        /// The transfer's memo as written when it moved.
        package let memo: String
        /// What the line says from this account's side: "From Checking", "To Saving", "To Alice Example", "Opening balance".
        package let description: String
        /// The customer's reference, when the transfer had one.
        package let reference: String?
        package let at: Date

        /// Whether money came in.
        package var isIncoming: Bool { amount.minorUnits > 0 }
    }

    /// A page of a statement: its lines, newest first, and whether older and newer lines exist.
    package struct StatementPage: Sendable, Equatable {
        package let entries: [Entry]
        package let hasOlder: Bool
        package let hasNewer: Bool
    }

    /// An account's entries, newest first, `limit` at a time: the newest, those before entry id `before` (older), or
    /// those after entry id `after` (newer).
    package func statement(of account: String, before: Int64? = nil, after: Int64? = nil, limit: Int = 20) throws
        -> StatementPage
    {
        let limit = max(1, min(100, limit))
        return try database.read { db in
            let newerFirst = after == nil
            let rows = try db.query(
                """
                SELECT e.id, e.transfer_id, e.amount, e.balance_after, e.created_at, t.memo, t.currency, t.reference, t.payee_name,
                       fa.name AS from_name, fa.kind AS from_kind, ta.name AS to_name
                FROM bank_entries e JOIN bank_transfers t ON t.id = e.transfer_id
                JOIN bank_accounts fa ON fa.id = t.from_account JOIN bank_accounts ta ON ta.id = t.to_account
                WHERE e.account_id = $1 AND \(newerFirst ? "e.id < $2" : "e.id > $2") ORDER BY e.id \(newerFirst ? "DESC" : "ASC") LIMIT $3
                """, [.text(account), .int(newerFirst ? (before ?? Int64.max) : after ?? 0), .int(Int64(limit + 1))])
            var entries = try rows.prefix(limit).map(Self.entry)
            let more = rows.count > limit
            if !newerFirst { entries.reverse() }
            func exists(_ condition: String, _ id: Int64?) throws -> Bool {
                guard let id else { return false }
                return try db.queryOne(
                    "SELECT e.id FROM bank_entries e WHERE e.account_id = $1 AND \(condition) LIMIT 1",
                    [.text(account), .int(id)]) != nil
            }
            let hasOlder = newerFirst ? more : try exists("e.id < $2", entries.last?.id ?? after)
            let hasNewer = newerFirst ? try exists("e.id > $2", entries.first?.id ?? before) : more
            return StatementPage(entries: entries, hasOlder: hasOlder, hasNewer: hasNewer)
        }
    }

    private static func entry(_ row: Row) throws -> Entry {
        let currency = try row.text("currency")
        let amount = try row.int("amount")
        let description: String
        if amount > 0 {
            description =
                try row.text("from_kind") == "opening" ? "Opening balance" : "From \(try row.text("from_name"))"
        } else {
            description = "To \(try row.optionalText("payee_name") ?? row.text("to_name"))"
        }
        return Entry(
            id: try row.int("id"), transferID: try row.text("transfer_id"),
            amount: Amount(minorUnits: amount, currency: currency),
            balanceAfter: Amount(minorUnits: try row.int("balance_after"), currency: currency),
            memo: try row.text("memo"),
            description: description, reference: try row.optionalText("reference"),
            at: Date(timeIntervalSince1970: Double(try row.int("created_at")) / 1000))
    }

    /// The books: the sum of all entries (zero when they balance), and the
    /// accounts whose balance differs from the sum of their entries.
    package func audit() throws -> (sumOfEntries: Int64, mismatchedAccounts: [String]) {
        try database.read { db in
            let sum =
                try db.queryOne("SELECT CAST(COALESCE(SUM(amount), 0) AS BIGINT) AS total FROM bank_entries")?.int(
                    "total") ?? 0
            let mismatched = try db.query(
                """
                SELECT a.id FROM bank_accounts a
                WHERE a.balance <> (SELECT COALESCE(SUM(e.amount), 0) FROM bank_entries e WHERE e.account_id = a.id)
                """
            ).map { try $0.text("id") }
            return (sum, mismatched)
        }
    }
}
