import Foundation
import Store

/// The double-entry ledger: every transfer writes its two entries (a debit
/// and a credit of the same amount) and moves both balances in one
/// transaction, so the sum of all entries is zero and each balance is the
/// sum of its entries. The debit is one conditional statement
/// (`balance >= amount`), so no account goes below zero however many
/// transfers race, and an idempotency key makes a repeated submit move
/// money once.
public struct Ledger: Sendable {
    let database: any Database

    public init(database: any Database) { self.database = database }

    /// Where a transfer goes.
    public enum Destination: Sendable, Equatable {
        /// Another account of this bank.
        case account(String)
        /// A payee at another bank: the money goes to the clearing account.
        case payee(name: String, iban: IBAN)
    }

    /// A transfer to carry out.
    public struct Transfer: Sendable {
        public var idempotencyKey: String
        public var from: String
        public var to: Destination
        public var amount: Amount
        /// The Trifactor authorization consumed for it.
        public var authorizationID: String?
        public var memo: String

        public init(idempotencyKey: String, from: String, to: Destination, amount: Amount, authorizationID: String?, memo: String) {
            self.idempotencyKey = idempotencyKey
            self.from = from
            self.to = to
            self.amount = amount
            self.authorizationID = authorizationID
            self.memo = memo
        }
    }

    /// What happened to a transfer.
    public enum Outcome: Sendable, Equatable {
        /// The money moved: the transfer's id.
        case moved(String)
        /// A transfer with this idempotency key moved already: nothing moved now.
        case alreadyDone(String)
    }

    /// Why a transfer moved nothing.
    public enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        case insufficientFunds, unknownAccount, sameAccount, currencyMismatch

        public var description: String {
            switch self {
            case .insufficientFunds: "The account does not hold enough for this transfer."
            case .unknownAccount: "That account does not exist."
            case .sameAccount: "Pick two different accounts."
            case .currencyMismatch: "Both accounts must be in the same currency."
            }
        }
    }

    /// One line of a statement.
    public struct Entry: Sendable, Equatable {
        public let id: Int64
        public let transferID: String
        public let amount: Amount
        public let balanceAfter: Amount
        public let memo: String
        public let at: Date
    }

    /// An account as a customer sees it.
    public struct Account: Sendable, Equatable {
        public let id: String
        public let kind: String
        public let name: String
        public let balance: Amount
    }

    // MARK: Accounts

    /// Opens a checking and a saving account for `customerID`, funded from the opening account.
    public func openAccounts(for customerID: String, currency: String, checking: Int64, saving: Int64, now: Date,
                             on db: any SQLConnection) throws -> (checking: String, saving: String) {
        let ids = (checking: UUID().uuidString.lowercased(), saving: UUID().uuidString.lowercased())
        for (id, kind, name) in [(ids.checking, "checking", "Checking"), (ids.saving, "saving", "Saving")] {
            try db.execute("INSERT INTO bank_accounts (id, customer_id, kind, name, currency, balance, created_at) VALUES ($1, $2, $3, $4, $5, 0, $6)",
                           [.text(id), .text(customerID), .text(kind), .text(name), .text(currency), .int(now.millis)])
        }
        for (id, amount) in [(ids.checking, checking), (ids.saving, saving)] where amount > 0 {
            _ = try move(Transfer(idempotencyKey: "opening:\(id)", from: "opening-\(currency)", to: .account(id),
                                  amount: Amount(minorUnits: amount, currency: currency), authorizationID: nil, memo: "Opening balance"),
                         now: now, on: db)
        }
        return ids
    }

    /// The customer's accounts.
    public func accounts(of customerID: String) throws -> [Account] {
        try database.read { db in
            try db.query("SELECT id, kind, name, currency, balance FROM bank_accounts WHERE customer_id = $1 ORDER BY kind", [.text(customerID)]).map {
                Account(id: try $0.text("id"), kind: try $0.text("kind"), name: try $0.text("name"),
                        balance: Amount(minorUnits: try $0.int("balance"), currency: try $0.text("currency")))
            }
        }
    }

    // MARK: Transfers

    /// Carries out `transfer` in a transaction of its own.
    /// - Throws: `Refusal` (nothing moved), or a `StoreError`.
    public func transfer(_ transfer: Transfer, now: Date) throws -> Outcome {
        do {
            return try database.transaction { try move(transfer, now: now, on: $0) }
        } catch let error as StoreError where error.kind == .uniqueViolation {
            // A racing submit with the same key won: report it, nothing moved here.
            guard let done = try database.read({ try existing(transfer.idempotencyKey, on: $0) }) else { throw error }
            return .alreadyDone(done)
        }
    }

    /// The transfer's writes inside the caller's transaction.
    func move(_ transfer: Transfer, now: Date, on db: any SQLConnection) throws -> Outcome {
        if let done = try existing(transfer.idempotencyKey, on: db) { return .alreadyDone(done) }
        let currency = transfer.amount.currency
        let target: String
        var payee: (name: String, iban: String)?
        switch transfer.to {
        case .account(let id): target = id
        case .payee(let name, let iban):
            target = "clearing-\(currency)"
            payee = (name, iban.electronic)
        }
        guard target != transfer.from else { throw Refusal.sameAccount }
        guard transfer.amount.minorUnits > 0 else { throw Refusal.insufficientFunds }
        for id in [transfer.from, target] {
            guard let row = try db.queryOne("SELECT currency FROM bank_accounts WHERE id = $1", [.text(id)]) else { throw Refusal.unknownAccount }
            guard try row.text("currency") == currency else { throw Refusal.currencyMismatch }
        }
        let amount = transfer.amount.minorUnits
        // One statement: the row lock, the check and the debit together.
        guard let debited = try db.queryOne("""
            UPDATE bank_accounts SET balance = balance - $2
            WHERE id = $1 AND (kind IN ('opening', 'clearing') OR balance >= $2) RETURNING balance
            """, [.text(transfer.from), .int(amount)]) else { throw Refusal.insufficientFunds }
        guard let credited = try db.queryOne("UPDATE bank_accounts SET balance = balance + $2 WHERE id = $1 RETURNING balance",
                                             [.text(target), .int(amount)]) else { throw Refusal.unknownAccount }
        let id = UUID().uuidString.lowercased()
        try db.execute("""
            INSERT INTO bank_transfers (id, idempotency_key, from_account, to_account, amount, currency, payee_name, payee_iban, authorization_id, memo, created_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
            """, [.text(id), .text(transfer.idempotencyKey), .text(transfer.from), .text(target), .int(amount), .text(currency),
                  SQLValue(payee?.name), SQLValue(payee?.iban), SQLValue(transfer.authorizationID), .text(String(transfer.memo.prefix(140))), .int(now.millis)])
        for (account, signed, after) in [(transfer.from, -amount, try debited.int("balance")), (target, amount, try credited.int("balance"))] {
            try db.execute("INSERT INTO bank_entries (transfer_id, account_id, amount, balance_after, created_at) VALUES ($1, $2, $3, $4, $5)",
                           [.text(id), .text(account), .int(signed), .int(after), .int(now.millis)])
        }
        return .moved(id)
    }

    private func existing(_ key: String, on db: any SQLConnection) throws -> String? {
        try db.queryOne("SELECT id FROM bank_transfers WHERE idempotency_key = $1", [.text(key)])?.text("id")
    }

    // MARK: Statements and the books

    /// An account's entries, newest first, `limit` at a time, before entry id `before` (for paging).
    public func statement(of account: String, before: Int64? = nil, limit: Int = 20) throws -> [Entry] {
        try database.read { db in
            try db.query("""
                SELECT e.id, e.transfer_id, e.amount, e.balance_after, e.created_at, t.memo, t.currency
                FROM bank_entries e JOIN bank_transfers t ON t.id = e.transfer_id
                WHERE e.account_id = $1 AND e.id < $2 ORDER BY e.id DESC LIMIT $3
                """, [.text(account), .int(before ?? Int64.max), .int(Int64(max(1, min(100, limit))))]).map { row in
                let currency = try row.text("currency")
                return Entry(id: try row.int("id"), transferID: try row.text("transfer_id"), amount: Amount(minorUnits: try row.int("amount"), currency: currency),
                             balanceAfter: Amount(minorUnits: try row.int("balance_after"), currency: currency), memo: try row.text("memo"),
                             at: Date(timeIntervalSince1970: Double(try row.int("created_at")) / 1000))
            }
        }
    }

    /// The books: the sum of all entries (zero when they balance), and the
    /// accounts whose balance differs from the sum of their entries.
    public func audit() throws -> (sumOfEntries: Int64, mismatchedAccounts: [String]) {
        try database.read { db in
            let sum = try db.queryOne("SELECT CAST(COALESCE(SUM(amount), 0) AS BIGINT) AS total FROM bank_entries")?.int("total") ?? 0
            let mismatched = try db.query("""
                SELECT a.id FROM bank_accounts a
                WHERE a.balance <> (SELECT COALESCE(SUM(e.amount), 0) FROM bank_entries e WHERE e.account_id = a.id)
                """).map { try $0.text("id") }
            return (sum, mismatched)
        }
    }
}

extension Date {
    var millis: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }
}
