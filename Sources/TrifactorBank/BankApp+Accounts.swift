import Foundation
import HTTP
import Store
import TrifactorKit
import WebUI

/// Accounts and statements: a card per account (its IBAN and balance, large)
/// under the total, and a statement read from the account's side, a page at
/// a time both ways, money in marked by its sign and a word, not by colour alone.
extension BankApp {
    /// The signed-in customer of a request, or the redirect to sign in, to add a second factor, or to confirm it's
    /// them after the idle time (the page they were opening is where confirming takes them).
    func customer(_ request: Request) throws(Refusal) -> (BankSession, String) {
        guard let session = session(request).session, case .signedIn(let customer, _) = session.stage else {
            // A page opened while signed out (a bookmark, a link, Back after signing out): the start page says why.
            throw Refusal(response: redirect(request.method == "GET" ? "/?continue=1" : "/"))
        }
        if session.needsFactor { throw Refusal(response: redirect("/setup/phone")) }
        if session.cameBack(now: now(), idle: configuration.idleTimeout) {
            if request.method == "GET", request.path.hasPrefix("/"), !request.path.hasPrefix("//") {
                let target = request.path + (request.rawQuery.isEmpty ? "" : "?" + request.rawQuery)
                session.flows { $0.comeBackTo = target }
            }
            throw Refusal(response: redirect("/confirm"))
        }
        return (session, customer)
    }

    /// The routes of accounts and statements: each HTTP method and path, and the handler that answers it.
    func addAccounts(_ router: inout Router) {
        route(&router, "GET", "/accounts", showAccounts)
        route(&router, "GET", "/accounts/:id", showStatement)
    }

    /// `GET /accounts`: the customer's accounts, a card each, under the total.
    func showAccounts(_ request: Request) throws -> Response {
        let (session, customer) = try customer(request)
        let accounts = try ledger.accounts(of: customer)
        let total = accounts.reduce(Int64(0)) { $0 + $1.balance.minorUnits }
        let cards: [HTML] = accounts.map { account in
            .element(
                "section", ["class": "card account", "aria-labelledby": "h-\(account.id)"],
                [
                    .element(
                        "h2", ["id": "h-\(account.id)"],
                        [.element("a", ["href": "/accounts/\(account.id)"], [.text(account.name)])]),
                    account.iban.map { .element("p", ["class": "iban"], [.text($0.description)]) } ?? .empty,
                    .element(
                        "p", ["class": "balance"],
                        [
                            .element("span", ["class": "label"], ["Balance"]),
                            .element("strong", ["class": "money"], [.text(account.balance.description)]),
                        ]),
                ])
        }
        return page(
            Page.layout(
                "Your accounts", screen(session, request, notice: session.takeNotice(), tab: .accounts, money: true),
                [
                    .element(
                        "p", ["class": "card total"],
                        [
                            .element("span", ["class": "label"], ["Total in your accounts"]),
                            .element(
                                "strong", ["class": "money"],
                                [
                                    .text(
                                        Amount(minorUnits: total, currency: accounts.first?.balance.currency ?? "EUR")
                                            .description)
                                ]),
                        ]),
                    .element("div", ["class": "grid"], cards),
                    Page.actions([Page.link("Make a transfer", "/transfer", class: "button primary")]),
                ]))
    }

    /// `GET /accounts/:id`: one account's statement, a page at a time both ways.
    func showStatement(_ request: Request) throws -> Response {
        let (session, customer) = try customer(request)
        guard let account = try ledger.accounts(of: customer).first(where: { $0.id == request.parameters["id"] }) else {
            return page(
                Page.layout(
                    "There is no such account", screen(session, request, tab: .accounts),
                    [Page.link("Go to your accounts", "/accounts", class: "button primary")]), status: 404)
        }
        let statement = try ledger.statement(
            of: account.id, before: request.query["before"].flatMap { Int64($0) },
            after: request.query["after"].flatMap { Int64($0) }, limit: 20)
        return page(
            Page.layout(
                account.name, screen(session, request, tab: .accounts, money: true), statementBody(account, statement)))
    }

    func statementBody(_ account: Ledger.Account, _ statement: Ledger.StatementPage) -> [HTML] {
        let rows: [HTML] = statement.entries.map { entry in
            let (day, time) = Self.dayAndTime(entry.at)
            return .element(
                "tr", [:],
                [
                    .element(
                        "td", ["class": "date"],
                        [
                            .element(
                                "time", ["datetime": WireJSON.format(entry.at)],
                                [
                                    .text(day), .element("span", ["class": "time"], [.text(time)]),
                                ])
                        ]),
                    .element(
                        "td", ["class": "desc"],
                        [
                            .text(entry.description),
                            entry.reference.map { .element("span", ["class": "ref"], [.text("Reference: \($0)")]) }
                                ?? .empty,
                        ]),
                    .element(
                        "td", ["class": "amount money \(entry.isIncoming ? "in" : "out")"],
                        [
                            .element("span", ["class": "value"], [.text(Self.signed(entry.amount))]),
                            .element("span", ["class": "dir"], [.text(entry.isIncoming ? "In" : "Out")]),
                        ]),
                    .element(
                        "td", ["class": "amount money balance-cell"],
                        [.element("span", ["class": "label"], ["Balance "]), .text(entry.balanceAfter.description)]),
                ])
        }
        var pager: [HTML] = []
        if statement.hasNewer, let first = statement.entries.first {
            pager.append(Page.link("← Newer transactions", "/accounts/\(account.id)?after=\(first.id)"))
        }
        if statement.hasOlder, let last = statement.entries.last {
            pager.append(Page.link("Older transactions →", "/accounts/\(account.id)?before=\(last.id)"))
        }
        return [
            .element(
                "div", ["class": "card"],
                [
                    .element(
                        "dl", ["class": "summary"],
                        [
                            .element("dt", [:], ["IBAN"]),
                            .element("dd", ["class": "iban"], [.text(account.iban?.description ?? "—")]),
                            .element("dt", [:], ["Balance"]),
                            .element("dd", ["class": "money big"], [.text(account.balance.description)]),
                        ])
                ]),
            Page.actions([Page.link("Make a transfer", "/transfer", class: "button primary")]),
            .element(
                "div", ["class": "card"],
                [
                    .element(
                        "table", ["class": "statement"],
                        [
                            .element(
                                "caption", [:],
                                [
                                    .text(
                                        statement.hasNewer
                                            ? "Transactions, newest first (earlier page)" : "Transactions, newest first"
                                    )
                                ]),
                            .element(
                                "thead", [:],
                                [
                                    .element(
                                        "tr", [:],
                                        [
                                            .element("th", ["scope": "col"], ["Date"]),
                                            .element("th", ["scope": "col"], ["Description"]),
                                            .element("th", ["scope": "col", "class": "amount"], ["Amount"]),
                                            .element("th", ["scope": "col", "class": "amount"], ["Balance"]),
                                        ])
                                ]),
                            .element("tbody", [:], rows),
                        ]),
                    rows.isEmpty ? Page.paragraph("No transactions yet.", class: "muted") : .empty,
                    pager.isEmpty
                        ? .empty : .element("nav", ["class": "pager", "aria-label": "Statement pages"], pager),
                ]),
        ]
    }

    /// "+EUR 100.00" for money in, "−EUR 250.00" for money out.
    static func signed(_ amount: Amount) -> String {
        let magnitude = Amount(minorUnits: Int64(amount.minorUnits.magnitude), currency: amount.currency)
        return (amount.minorUnits > 0 ? "+" : "−") + magnitude.description
    }

    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// "2 Dec 2026" and "07:15 UTC" (the bank does not know the customer's time zone).
    static func dayAndTime(_ date: Date) -> (day: String, time: String) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        let two = { (n: Int?) in String(format: "%02d", n ?? 0) }
        return ("\(c.day ?? 1) \(months[(c.month ?? 1) - 1]) \(c.year ?? 1970)", "\(two(c.hour)):\(two(c.minute)) UTC")
    }

    /// "2 Dec 2026" of `date`.
    static func day(_ date: Date) -> String { dayAndTime(date).day }
}
