import Crypto
package import Foundation
package import Store

/// The double-entry ledger: every transfer writes its two entries (a debit
/// and a credit of the same amount) and moves both balances in one
/// transaction, so the sum of all entries is zero and each balance is the
/// sum of its entries. The debit is one conditional statement
/// (`balance >= amount`), so no account goes below zero however many
/// transfers race, and an idempotency key makes a repeated submit move
/// money once.
package struct Ledger: Sendable {
    let database: any Database

    package init(database: any Database) { self.database = database }

    /// Where a transfer goes.
    package enum Destination: Sendable, Equatable {
        /// Another account of this bank.
        case account(String)
        /// A payee at another bank: the money goes to the clearing account.
        case payee(name: String, iban: IBAN)
    }

    /// A transfer to carry out.
    package struct Transfer: Sendable {
        package var idempotencyKey: String
        package var from: String
        package var to: Destination
        package var amount: Amount
        /// The Trifactor authorization consumed for it.
        package var authorizationID: String?
        package var memo: String
        /// The customer's reference (up to 140 characters), on both sides' statements.
        package var reference: String?

        package init(
            idempotencyKey: String, from: String, to: Destination, amount: Amount, authorizationID: String?,
            memo: String, reference: String? = nil
        ) {
            self.idempotencyKey = idempotencyKey
            self.from = from
            self.to = to
            self.amount = amount
            self.authorizationID = authorizationID
            self.memo = memo
            self.reference = reference
        }
    }

    /// What happened to a transfer.
    package enum Outcome: Sendable, Equatable {
        /// The money moved: the transfer's id.
        case moved(String)
        /// A transfer with this idempotency key moved already: nothing moved now.
        case alreadyDone(String)
    }

    /// Why a transfer moved nothing.
    package enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        case insufficientFunds, unknownAccount, sameAccount, currencyMismatch

        package var description: String {
            switch self {
            case .insufficientFunds: "The account does not hold enough for this transfer."
            case .unknownAccount: "That account does not exist."
            case .sameAccount: "Pick two different accounts."
            case .currencyMismatch: "Both accounts must be in the same currency."
            }
        }
    }

    /// An account as a customer sees it.
    package struct Account: Sendable, Equatable {
        package let id: String
        package let kind: String
        package let name: String
        package let balance: Amount
        /// The account's IBAN (a demo one: `IBAN.demo`), nil only for the books' own accounts.
        package let iban: IBAN?
    }

    // MARK: Accounts

    /// Opens a checking and a saving account for `customerID`, funded from the opening account.
    package func openAccounts(
        for customerID: String, currency: String, checking: Int64, saving: Int64, now: Date,
        on db: any SQLConnection
    ) throws -> (checking: String, saving: String) {
        let ids = (checking: UUID().uuidString.lowercased(), saving: UUID().uuidString.lowercased())
        for (id, kind, name) in [(ids.checking, "checking", "Checking"), (ids.saving, "saving", "Saving")] {
            try db.execute(
                """
                INSERT INTO bank_accounts (id, customer_id, kind, name, currency, balance, created_at, iban) VALUES ($1, $2, $3, $4, $5, 0, $6, $7)
                """,
                [
                    .text(id), .text(customerID), .text(kind), .text(name), .text(currency), .int(now.millis),
                    .text(try freeIBAN(on: db).electronic),
                ])
        }
        for (id, amount) in [(ids.checking, checking), (ids.saving, saving)] where amount > 0 {
            _ = try move(
                Transfer(
                    idempotencyKey: "opening:\(id)", from: "opening-\(currency)", to: .account(id),
                    amount: Amount(minorUnits: amount, currency: currency), authorizationID: nil,
                    memo: "Opening balance"),
                now: now, on: db)
        }
        return ids
    }

    /// The customer's accounts.
    package func accounts(of customerID: String) throws -> [Account] {
        try database.read { db in
            try db.query(
                "SELECT id, kind, name, currency, balance, iban FROM bank_accounts WHERE customer_id = $1 ORDER BY kind",
                [.text(customerID)]
            ).map {
                Account(
                    id: try $0.text("id"), kind: try $0.text("kind"), name: try $0.text("name"),
                    balance: Amount(minorUnits: try $0.int("balance"), currency: try $0.text("currency")),
                    iban: try $0.optionalText("iban").flatMap { try? IBAN(parsing: $0) })
            }
        }
    }

    /// A demo IBAN no account holds yet (`IBAN.demo` of ten random digits).
    func freeIBAN(on db: any SQLConnection) throws -> IBAN {
        while true {
            let digits = SecureRandom.bytes(10).map { String($0 % 10) }.joined()
            let iban = IBAN.demo(account: digits)
            if try db.queryOne("SELECT id FROM bank_accounts WHERE iban = $1", [.text(iban.electronic)]) == nil {
                return iban
            }
        }
    }

    /// Gives every customer account opened before accounts had IBANs its own (run at start-up, after migrating).
    package func assignMissingIBANs() throws {
        try database.transaction { db in
            for row in try db.query("SELECT id FROM bank_accounts WHERE iban IS NULL AND customer_id IS NOT NULL") {
                try db.execute(
                    "UPDATE bank_accounts SET iban = $2 WHERE id = $1",
                    [.text(try row.text("id")), .text(try freeIBAN(on: db).electronic)])
            }
        }
    }

    // MARK: Transfers

    /// Carries out `transfer` in a transaction of its own.
    /// - Throws: `Refusal` (nothing moved), or a `StoreError`.
    package func transfer(_ transfer: Transfer, now: Date) throws -> Outcome {
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
            guard let row = try db.queryOne("SELECT currency FROM bank_accounts WHERE id = $1", [.text(id)]) else {
                throw Refusal.unknownAccount
            }
            guard try row.text("currency") == currency else { throw Refusal.currencyMismatch }
        }
        let amount = transfer.amount.minorUnits
        // One statement: the row lock, the check and the debit together.
        guard
            let debited = try db.queryOne(
                """
                UPDATE bank_accounts SET balance = balance - $2
                WHERE id = $1 AND (kind IN ('opening', 'clearing') OR balance >= $2) RETURNING balance
                """, [.text(transfer.from), .int(amount)])
        else { throw Refusal.insufficientFunds }
        guard
            let credited = try db.queryOne(
                "UPDATE bank_accounts SET balance = balance + $2 WHERE id = $1 RETURNING balance",
                [.text(target), .int(amount)])
        else { throw Refusal.unknownAccount }
        let id = UUID().uuidString.lowercased()
        try db.execute(
            """
            INSERT INTO bank_transfers (id, idempotency_key, from_account, to_account, amount, currency, payee_name, payee_iban, authorization_id, memo, created_at,
                                        reference)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
            """,
            [
                .text(id), .text(transfer.idempotencyKey), .text(transfer.from), .text(target), .int(amount),
                .text(currency),
                SQLValue(payee?.name), SQLValue(payee?.iban), SQLValue(transfer.authorizationID),
                .text(String(transfer.memo.prefix(140))), .int(now.millis),
                SQLValue(transfer.reference.map { String($0.prefix(140)) }),
            ])
        for (account, signed, after) in [
            (transfer.from, -amount, try debited.int("balance")), (target, amount, try credited.int("balance")),
        ] {
            try db.execute(
                "INSERT INTO bank_entries (transfer_id, account_id, amount, balance_after, created_at) VALUES ($1, $2, $3, $4, $5)",
                [.text(id), .text(account), .int(signed), .int(after), .int(now.millis)])
        }
        return .moved(id)
    }

    private func existing(_ key: String, on db: any SQLConnection) throws -> String? {
        try db.queryOne("SELECT id FROM bank_transfers WHERE idempotency_key = $1", [.text(key)])?.text("id")
    }
}

extension Date {
    var millis: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }
}
