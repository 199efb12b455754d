import Foundation
import Store
import Synchronization
import Testing
import TrifactorTestSupport

@testable import TrifactorBank

@Suite("The bank's double-entry ledger")
struct LedgerTests {
    static func withLedger(_ backend: Backend, _ body: (Ledger, any Database) throws -> Void) throws {
        try backend.withFreshDatabase(poolSize: 8) { database, _ in
            try database.migrate(BankSchema.migrations)
            try body(Ledger(database: database), database)
        }
    }

    static func customer(_ database: any Database, _ ledger: Ledger, checking: Int64, saving: Int64 = 0) throws -> (
        checking: String, saving: String
    ) {
        try database.transaction { db in
            let id = UUID().uuidString
            try db.execute(
                """
                INSERT INTO bank_customers (id, email, name, phone, sitekey_picture, sitekey_phrase, created_at)
                VALUES ($1, $2, 'Ann', '+447400123456', 'owl', 'night watch', 0)
                """, [.text(id), .text("\(id)@example.com")])
            return try ledger.openAccounts(
                for: id, currency: "EUR", checking: checking, saving: saving, now: Date(), on: db)
        }
    }

    static func eur(_ text: String) -> Amount { try! Amount(parsing: text, currency: "EUR") }

    @Test("a transfer writes two entries, moves both balances, and the books balance", arguments: Backend.all)
    func transfer(backend: Backend) throws {
        try Self.withLedger(backend) { ledger, database in
            let ann = try Self.customer(database, ledger, checking: 100_000, saving: 50_000)
            let outcome = try ledger.transfer(
                .init(
                    idempotencyKey: "k1", from: ann.checking, to: .account(ann.saving), amount: Self.eur("250.00"),
                    authorizationID: "auth-1", memo: "To saving"), now: Date())
            guard case .moved = outcome else {
                Issue.record("expected a move")
                return
            }
            let balances = Dictionary(
                uniqueKeysWithValues: try ledger.accounts(
                    of: try #require(
                        try database.read {
                            try $0.queryOne(
                                "SELECT customer_id FROM bank_accounts WHERE id = $1", [.text(ann.checking)])?.text(
                                    "customer_id")
                        })
                ).map { ($0.kind, $0.balance.minorUnits) })
            #expect(balances == ["checking": 75_000, "saving": 75_000])
            let lines = try ledger.statement(of: ann.checking).entries
            #expect(lines.map(\.amount.minorUnits) == [-25_000, 100_000])
            #expect(lines.map(\.balanceAfter.minorUnits) == [75_000, 100_000])
            #expect(lines.first?.memo == "To saving")
            let books = try ledger.audit()
            #expect(books.sumOfEntries == 0 && books.mismatchedAccounts.isEmpty)
        }
    }

    @Test("the same idempotency key moves money once; refusals move nothing", arguments: Backend.all)
    func idempotencyAndRefusals(backend: Backend) throws {
        try Self.withLedger(backend) { ledger, database in
            let ann = try Self.customer(database, ledger, checking: 10_000)
            let request = Ledger.Transfer(
                idempotencyKey: "same", from: ann.checking,
                to: .payee(name: "Alice", iban: try IBAN(parsing: "DE89370400440532013000")),
                amount: Self.eur("40"), authorizationID: nil, memo: "Rent")
            guard case .moved(let first) = try ledger.transfer(request, now: Date()) else {
                Issue.record("expected a move")
                return
            }
            #expect(try ledger.transfer(request, now: Date()) == .alreadyDone(first))
            #expect(throws: Ledger.Refusal.insufficientFunds) {
                try ledger.transfer(
                    .init(
                        idempotencyKey: "big", from: ann.checking, to: .account(ann.saving), amount: Self.eur("60.01"),
                        authorizationID: nil, memo: ""), now: Date())
            }
            #expect(throws: Ledger.Refusal.sameAccount) {
                try ledger.transfer(
                    .init(
                        idempotencyKey: "self", from: ann.checking, to: .account(ann.checking), amount: Self.eur("1"),
                        authorizationID: nil, memo: ""), now: Date())
            }
            #expect(throws: Ledger.Refusal.unknownAccount) {
                try ledger.transfer(
                    .init(
                        idempotencyKey: "ghost", from: ann.checking, to: .account("no-such-account"),
                        amount: Self.eur("1"),
                        authorizationID: nil, memo: ""), now: Date())
            }
            #expect(try ledger.statement(of: ann.checking).entries.map(\.amount.minorUnits) == [-4_000, 10_000])
            #expect(try ledger.audit().sumOfEntries == 0)
        }
    }

    @Test(
        "20 concurrent transfers from an account that affords 6 of them move exactly 6, and the books balance",
        arguments: Backend.all)
    func concurrentTransfers(backend: Backend) throws {
        try Self.withLedger(backend) { ledger, database in
            let ann = try Self.customer(database, ledger, checking: 100_000)
            let outcomes = Mutex<[Result<Ledger.Outcome, Ledger.Refusal>]>([])
            runThreads(20) { index in
                let request = Ledger.Transfer(
                    idempotencyKey: "race-\(index)", from: ann.checking, to: .account(ann.saving),
                    amount: Self.eur("150.00"),
                    authorizationID: nil, memo: "race")
                let result: Result<Ledger.Outcome, Ledger.Refusal>
                do { result = .success(try ledger.transfer(request, now: Date())) } catch let refusal as Ledger.Refusal
                {
                    result = .failure(refusal)
                } catch {
                    Issue.record("unexpected \(error)")
                    return
                }
                outcomes.withLock { $0.append(result) }
            }
            let all = outcomes.withLock { $0 }
            #expect(all.count == 20)
            #expect(all.filter { if case .success = $0 { true } else { false } }.count == 6)
            #expect(all.filter { $0 == .failure(.insufficientFunds) }.count == 14)
            let checking = try #require(try ledger.statement(of: ann.checking, limit: 100).entries.first)
            #expect(checking.balanceAfter.minorUnits == 10_000)
            let books = try ledger.audit()
            #expect(books.sumOfEntries == 0)
            #expect(books.mismatchedAccounts.isEmpty)
        }
    }
}
