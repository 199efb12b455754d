import Foundation
import Store
import Testing
import TrifactorTestSupport

@testable import TrifactorBank

@Suite("Statements read from each account's side, page both ways, and show the account's IBAN")
struct StatementTests {
    @Test(
        "a transfer between the customer's accounts reads 'To Saving' on Checking and 'From Checking' on Saving, its reference on both",
        arguments: Backend.all)
    func bothSides(backend: Backend) throws {
        try LedgerTests.withLedger(backend) { ledger, database in
            let ann = try LedgerTests.customer(database, ledger, checking: 100_000, saving: 50_000)
            _ = try ledger.transfer(
                .init(
                    idempotencyKey: "k1", from: ann.checking, to: .account(ann.saving), amount: LedgerTests.eur("25"),
                    authorizationID: nil, memo: "Transfer to your saving account", reference: "Rent March"), now: Date()
            )
            let payee = try IBAN(parsing: "DE89 3704 0044 0532 0130 00")
            _ = try ledger.transfer(
                .init(
                    idempotencyKey: "k2", from: ann.checking, to: .payee(name: "Alice Example", iban: payee),
                    amount: LedgerTests.eur("5"), authorizationID: nil, memo: "To Alice Example"), now: Date())
            let checking = try ledger.statement(of: ann.checking).entries
            let saving = try ledger.statement(of: ann.saving).entries
            #expect(checking.map(\.description) == ["To Alice Example", "To Saving", "Opening balance"])
            #expect(saving.map(\.description) == ["From Checking", "Opening balance"])
            #expect(
                checking[1].reference == "Rent March" && saving[0].reference == "Rent March"
                    && checking[0].reference == nil)
            #expect(saving[0].isIncoming && !checking[1].isIncoming)
        }
    }

    @Test(
        "a statement pages older and newer, each page knowing whether there is more either way", arguments: Backend.all)
    func paging(backend: Backend) throws {
        try LedgerTests.withLedger(backend) { ledger, database in
            let ann = try LedgerTests.customer(database, ledger, checking: 100_000, saving: 0)
            for i in 1...6 {
                _ = try ledger.transfer(
                    .init(
                        idempotencyKey: "k\(i)", from: ann.checking, to: .account(ann.saving),
                        amount: LedgerTests.eur("\(i)"),
                        authorizationID: nil, memo: "m"), now: Date())
            }
            // Seven lines: the opening balance and six transfers, newest first.
            let newest = try ledger.statement(of: ann.checking, limit: 3)
            #expect(
                newest.entries.map(\.amount.minorUnits) == [-600, -500, -400] && newest.hasOlder && !newest.hasNewer)
            let middle = try ledger.statement(of: ann.checking, before: newest.entries.last?.id, limit: 3)
            #expect(
                middle.entries.map(\.amount.minorUnits) == [-300, -200, -100] && middle.hasOlder && middle.hasNewer)
            let oldest = try ledger.statement(of: ann.checking, before: middle.entries.last?.id, limit: 3)
            #expect(oldest.entries.map(\.amount.minorUnits) == [100_000] && !oldest.hasOlder && oldest.hasNewer)
            let back = try ledger.statement(of: ann.checking, after: oldest.entries.first?.id, limit: 3)
            #expect(back == middle)
            let top = try ledger.statement(of: ann.checking, after: back.entries.first?.id, limit: 3)
            #expect(top == newest)
        }
    }

    @Test(
        "every account gets its own demo IBAN whose check digits pass, also accounts opened before IBANs",
        arguments: Backend.all)
    func ibans(backend: Backend) throws {
        try LedgerTests.withLedger(backend) { ledger, database in
            let ann = try LedgerTests.customer(database, ledger, checking: 1, saving: 1)
            try database.transaction {
                _ = try $0.execute("UPDATE bank_accounts SET iban = NULL WHERE id = $1", [.text(ann.saving)])
            }
            try ledger.assignMissingIBANs()
            let ibans = try database.read {
                try $0.query("SELECT iban FROM bank_accounts WHERE customer_id IS NOT NULL").map { try $0.text("iban") }
            }
            #expect(ibans.count == 2 && Set(ibans).count == 2)
            for iban in ibans {
                let parsed = try IBAN(parsing: iban)
                #expect(
                    parsed.electronic.hasPrefix("NL") && parsed.electronic.dropFirst(4).hasPrefix("TRFB")
                        && parsed.electronic.count == 18)
            }
        }
        #expect(IBAN.demo(account: "0123456789").description == "NL76 TRFB 0123 4567 89")
        #expect(IBAN.mod97(String("NL76TRFB0123456789".dropFirst(4) + "NL76")) == 1)
    }

    @Test("the statement page marks money in by sign and word, with the date and time, and pages both ways")
    func statementPage() async throws {
        try await BankHarness.run { bank in
            let ann = try bank.customer("ann@example.com")
            let accounts = try bank.app.ledger.accounts(of: ann)
            for i in 1...25 {
                _ = try bank.app.ledger.transfer(
                    .init(
                        idempotencyKey: "k\(i)", from: accounts[0].id, to: .account(accounts[1].id),
                        amount: LedgerTests.eur("1"), authorizationID: nil, memo: "m",
                        reference: i == 25 ? "Last one" : nil),
                    now: bank.clock.now)
            }
            let (browser, _) = try await bank.signedIn(ann)
            bank.trifactor.routes { _, _, _ in nil }
            let saving = await browser.send("GET", "/accounts/\(accounts[1].id)").text
            #expect(
                saving.contains("From Checking") && saving.contains("+EUR 1.00")
                    && saving.contains(#"<span class="dir">In</span>"#))
            #expect(saving.contains("Reference: Last one") && saving.contains("17 Mar 2030") && saving.contains("UTC"))
            #expect(
                saving.contains(accounts[1].iban?.description ?? "no IBAN") && saving.contains("Older transactions"))
            #expect(!saving.contains("Newer transactions"))
            let older = try #require(
                saving.range(of: "before=").map { String(saving[$0.upperBound...].prefix { $0.isNumber }) })
            let second = await browser.send("GET", "/accounts/\(accounts[1].id)?before=\(older)").text
            #expect(second.contains("Newer transactions") && second.contains("Opening balance") == false)
            let checking = await browser.send("GET", "/accounts/\(accounts[0].id)").text
            #expect(
                checking.contains("To Saving") && checking.contains("−EUR 1.00")
                    && checking.contains(#"<span class="dir">Out</span>"#))
        }
    }
}
