import Foundation
import HTTP
import Store
import TrifactorKit

/// Accounts, statements and transfers, each transfer confirmed by a Trifactor
/// authorization bound to its amount and payee and spent (`consume`) for
/// exactly that action just before the ledger moves.
extension BankApp {
    /// The signed-in customer of a request, or the redirect to sign in.
    func customer(_ request: Request) throws(Refusal) -> (BankSession, String) {
        guard let session = session(request).session, case .signedIn(let customer, _) = session.stage else {
            throw Refusal(response: redirect("/"))
        }
        if session.needsFactor { throw Refusal(response: redirect("/setup/phone")) }
        if session.cameBack(now: now(), idle: configuration.idleTimeout) { throw Refusal(response: redirect("/confirm")) }
        return (session, customer)
    }

    func addAccounts(_ router: inout Router) {
        route(&router, "GET", "/accounts") { [self] request in
            let (session, customer) = try customer(request)
            let accounts = try ledger.accounts(of: customer)
            return page(Page.layout("Your accounts", session: session, devPhone: configuration.devPhone, notice: session.takeNotice(),
                                    idle: configuration.idleTimeout, accounts.map { account in
                .element("div", ["class": "card"], [
                    .element("h2", [:], [.element("a", ["href": "/accounts/\(account.id)"], [.text(account.name)])]),
                    .element("p", ["class": "balance"], [.text("Balance "), .element("strong", [:], [.text(account.balance.description)])]),
                ])
            } + [Page.link("Make a transfer", "/transfer")]))
        }
        route(&router, "GET", "/accounts/:id") { [self] request in
            let (session, customer) = try customer(request)
            guard let account = try ledger.accounts(of: customer).first(where: { $0.id == request.parameters["id"] }) else {
                return refused(404, "There is no such account.")
            }
            let before = request.query["before"].flatMap { Int64($0) }
            let entries = try ledger.statement(of: account.id, before: before, limit: 20)
            let rows: [HTML] = entries.map { entry in
                .element("tr", [:], [
                    .element("td", [:], [.text(Self.day(entry.at))]), .element("td", [:], [.text(entry.memo)]),
                    .element("td", ["class": "amount"], [.text(entry.amount.description)]),
                    .element("td", ["class": "amount"], [.text(entry.balanceAfter.description)]),
                ])
            }
            var body: [HTML] = [Page.paragraph("Balance \(account.balance.description)"),
                                .element("table", [:], [
                                    .element("caption", [:], [.text("Transactions, newest first")]),
                                    .element("thead", [:], [.element("tr", [:], [.element("th", ["scope": "col"], ["Date"]), .element("th", ["scope": "col"], ["Description"]),
                                                                             .element("th", ["scope": "col", "class": "amount"], ["Amount"]),
                                                                             .element("th", ["scope": "col", "class": "amount"], ["Balance"])])]),
                                    .element("tbody", [:], rows),
                                ])]
            if entries.count == 20, let last = entries.last { body.append(Page.link("Older transactions", "/accounts/\(account.id)?before=\(last.id)")) }
            return page(Page.layout(account.name, session: session, devPhone: configuration.devPhone, idle: configuration.idleTimeout, body))
        }
        route(&router, "GET", "/transfer") { [self] request in
            let (session, customer) = try customer(request)
            return page(transferPage(session, accounts: try ledger.accounts(of: customer), form: nil, errors: [:]))
        }
        route(&router, "POST", "/transfer") { [self] request in
            let (session, form, _) = try posted(request)
            let (_, customer) = try self.customer(request)
            let accounts = try ledger.accounts(of: customer)
            var errors: [String: String] = [:]
            let from = accounts.first { $0.id == form["from"] }
            if from == nil { errors["from"] = "Pick one of your accounts." }
            var destination: Ledger.Destination?
            var label = ""
            if form["to"] == "payee" {
                let name = form["payee_name"] ?? ""
                if name.isEmpty || name.count > 70 || name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                    errors["payee_name"] = "Enter the payee's name (up to 70 characters)."
                }
                do throws(IBAN.Refusal) {
                    let iban = try IBAN(parsing: form["iban"] ?? "")
                    destination = .payee(name: name, iban: iban)
                    label = "\(name) (\(iban))"
                } catch { errors["iban"] = error.description }
            } else if let to = accounts.first(where: { $0.id == form["to"] }), to.id != from?.id {
                destination = .account(to.id)
                label = "your \(to.name.lowercased()) account"
            } else {
                errors["to"] = "Pick another of your accounts, or a payee."
            }
            var amount: Amount?
            do throws(Amount.Refusal) { amount = try Amount(parsing: form["amount"] ?? "", currency: from?.balance.currency ?? "EUR") } catch {
                errors["amount"] = error.description
            }
            if let amount, let from, amount > from.balance { errors["amount"] = "That is more than the \(from.balance.description) in \(from.name)." }
            guard errors.isEmpty, let from, let destination, let amount else {
                return page(transferPage(session, accounts: accounts, form: form, errors: errors), status: 422)
            }
            let factors = try blocking({ [self] in try await trifactor(session, request).factors() }).map(FactorHint.init).filter {
                if case .phone = $0.kind { return true }
                return $0.kind == .totp || $0.kind == .passkey
            }
            let pending = PendingTransfer(id: UUID().uuidString.lowercased(), from: from.id, to: destination, toLabel: label, amount: amount)
            session.store(pending)
            return page(Page.layout("Check your transfer", session: session, devPhone: configuration.devPhone, [
                .element("dl", ["class": "card"], [
                    .element("dt", [:], ["Amount"]), .element("dd", [:], [.text(amount.description)]),
                    .element("dt", [:], ["From"]), .element("dd", [:], [.text(from.name)]),
                    .element("dt", [:], ["To"]), .element("dd", [:], [.text(label)]),
                ]),
                Page.form("/transfer/confirm", session, [
                    .element("input", ["type": "hidden", "name": "transfer", "value": pending.id]),
                    Page.select("Confirm with", name: "factor", options: factors.map { ($0.id, FactorLabel.of($0)) }),
                    Page.button("Confirm transfer"),
                ]),
                Page.link("Change it", "/transfer"),
            ]))
        }
        route(&router, "POST", "/transfer/confirm") { [self] request in
            let (session, form, _) = try posted(request)
            _ = try customer(request)
            guard var pending = session.pendingTransfer(form["transfer"] ?? "") else { return refused(409, "This transfer is no longer waiting. Nothing was moved.") }
            let client = trifactor(session, request)
            guard let factor = try blocking({ try await client.factors() }).map(FactorHint.init).first(where: { $0.id == form["factor"] }) else {
                return refused(422, "Pick how to confirm. Nothing was moved.")
            }
            let action = Self.action(pending)
            let authorization: PendingAuthorization
            do { authorization = try blocking({ try await client.authorize(action, with: factor) }) } catch {
                return page(Page.layout("Transfer not made", session: session, devPhone: configuration.devPhone,
                                        [Page.paragraph(Self.sentence(error) + " Nothing was moved."), Page.link("Back to the transfer", "/transfer")]),
                            status: (error as? TrifactorError)?.problem?.status ?? 503)
            }
            pending.authorizationID = authorization.id
            pending.factor = factor
            pending.summary = authorization.summary
            if case .passkey(let options) = authorization.challenge { pending.passkeyOptions = options }
            session.store(pending)
            return page(approvePage(session, pending, error: nil))
        }
        route(&router, "POST", "/transfer/approve") { [self] request in
            let (session, form, _) = try posted(request)
            _ = try customer(request)
            guard let pending = session.pendingTransfer(form["transfer"] ?? ""), pending.authorizationID != nil else {
                return refused(409, "This transfer is no longer waiting. Nothing was moved.")
            }
            switch complete(pending, session, request, proof: .code(form["code"] ?? "")) {
            case .moved:
                return redirect("/accounts")
            case .wrongCode(let error):
                return page(approvePage(session, pending, error: Self.wrongCode(error)), status: 400)
            case .refused(let status, let sentence):
                return page(Page.layout("Transfer not made", session: session, devPhone: configuration.devPhone, [Page.paragraph(sentence)]), status: status)
            }
        }
        route(&router, "POST", "/transfer/passkey/options") { [self] request in
            let (session, _) = try postedJSON(request)
            guard case .signedIn = session.stage,
                  let id = (try? WireJSON.sharedDecoder.decode([String: String].self, from: Data(request.body)))?["transfer"],
                  let pending = session.pendingTransfer(id), let options = pending.passkeyOptions else {
                return jsonError(409, "This transfer is no longer waiting. Nothing was moved.")
            }
            return Response.json(RequestBody(options: options))
        }
        route(&router, "POST", "/transfer/passkey") { [self] request in
            let (session, _) = try postedJSON(request)
            guard case .signedIn = session.stage, let body = try? WireJSON.sharedDecoder.decode(TransferAssertionBody.self, from: Data(request.body)),
                  let pending = session.pendingTransfer(body.transfer), pending.passkeyOptions != nil else {
                return jsonError(409, "This transfer is no longer waiting. Nothing was moved.")
            }
            switch complete(pending, session, request, proof: .assertion(body.assertion)) {
            case .moved: return Response.json(Next(redirect: "/accounts"))
            case .wrongCode(let error): return jsonError(400, Self.sentence(error))
            case .refused(let status, let sentence): return jsonError(status, sentence)
            }
        }
    }

    struct TransferAssertionBody: Decodable { let transfer: String; let assertion: CredentialJSON }

    /// How completing a transfer ended.
    enum Completion {
        case moved
        case wrongCode(TrifactorError)
        case refused(status: Int, sentence: String)
    }

    /// Approves the transfer's authorization with `proof`, spends it for exactly this action, then moves the money once.
    func complete(_ pending: PendingTransfer, _ session: BankSession, _ request: Request, proof: SecondFactorProof) -> Completion {
        guard let authorization = pending.authorizationID else { return .refused(status: 409, sentence: "This transfer is no longer waiting. Nothing was moved.") }
        let client = trifactor(session, request)
        do {
            try blocking({ try await client.approveAuthorization(authorization, with: proof) })
        } catch let error as TrifactorError where error.problem?.code == .invalidCode {
            return .wrongCode(error)
        } catch {
            return .refused(status: (error as? TrifactorError)?.problem?.status ?? 500, sentence: Self.sentence(error) + " Nothing was moved.")
        }
        // Spent for exactly this action, then the ledger moves (once per transfer id).
        session.dropTransfer(pending.id)
        do { try blocking({ try await client.consumeAuthorization(authorization, for: Self.action(pending)) }) } catch {
            return .refused(status: 409, sentence: Self.sentence(error) + " Nothing was moved.")
        }
        do {
            _ = try ledger.transfer(.init(idempotencyKey: pending.id, from: pending.from, to: pending.to, amount: pending.amount,
                                          authorizationID: authorization, memo: Self.memo(pending)), now: now())
        } catch let refusal as Ledger.Refusal {
            return .refused(status: 409, sentence: refusal.description + " Nothing was moved.")
        } catch {
            return .refused(status: 500, sentence: "The transfer could not be made. Nothing was moved.")
        }
        session.flash("Sent \(pending.amount.description) to \(pending.toLabel).")
        return .moved
    }

    /// What Trifactor binds the approval to: amount, currency, payee and the source account.
    static func action(_ pending: PendingTransfer) -> BoundAction {
        .transfer(amount: pending.amount.plain, currency: pending.amount.currency, payee: pending.toLabel, from: pending.from)
    }

    static func memo(_ pending: PendingTransfer) -> String {
        switch pending.to {
        case .account: "Transfer to \(pending.toLabel)"
        case .payee(let name, _): "To \(name)"
        }
    }

    static func day(_ date: Date) -> String { String(WireJSON.format(date).prefix(10)) }

    func transferPage(_ session: BankSession, accounts: [Ledger.Account], form: Form?, errors: [String: String]) -> HTML {
        let own = accounts.map { ($0.id, "\($0.name) (\($0.balance.description))") }
        return Page.layout("Make a transfer", session: session, devPhone: configuration.devPhone, idle: configuration.idleTimeout, [
            Page.form("/transfer", session, [
                Page.select("From", name: "from", options: own, selected: form?["from"], error: errors["from"]),
                Page.select("To", name: "to", options: accounts.map { ($0.id, $0.name) } + [("payee", "A payee at another bank")], selected: form?["to"],
                            error: errors["to"]),
                Page.field("Payee name (for a payee)", name: "payee_name", value: form?["payee_name"], error: errors["payee_name"], required: false),
                Page.field("Payee IBAN (for a payee)", name: "iban", value: form?["iban"], error: errors["iban"], required: false),
                Page.field("Amount in EUR", name: "amount", value: form?["amount"], error: errors["amount"], inputmode: "decimal"),
                Page.button("Review transfer"),
            ]),
        ])
    }

    func approvePage(_ session: BankSession, _ pending: PendingTransfer, error: String?) -> HTML {
        if pending.passkeyOptions != nil {
            return Page.layout("Confirm the transfer", session: session, devPhone: configuration.devPhone, passkeys: true, [
                Page.paragraph(pending.summary ?? "Confirm the transfer"),
                Page.paragraph("Your passkey signs this exact transfer: its amount and payee."),
                .element("button", ["type": "button", "class": "primary", "data-passkey": "authorize", "data-transfer": pending.id],
                         ["Confirm with Touch ID / Face ID / your security key"]),
            ])
        }
        let sentTo: String
        switch pending.factor?.kind {
        case .phone(let masked)?: sentTo = "We sent a code to \(masked); the message names the amount and the payee. Check them before you type it."
        default: sentTo = "Type the code from your authenticator app."
        }
        return Page.layout("Confirm the transfer", session: session, devPhone: configuration.devPhone, [
            Page.paragraph(pending.summary ?? "Confirm the transfer"),
            Page.paragraph(sentTo),
            Page.form("/transfer/approve", session, [
                .element("input", ["type": "hidden", "name": "transfer", "value": pending.id]),
                Page.field("Code", name: "code", error: error, autocomplete: "one-time-code", inputmode: "numeric", autofocus: true),
                Page.button("Confirm and send"),
            ]),
        ])
    }
}

/// How a factor is named in the bank's pages.
enum FactorLabel {
    static func of(_ hint: FactorHint) -> String {
        switch hint.kind {
        case .phone(let masked): "A text message to \(masked)"
        case .totp: "My authenticator app"
        case .device: "My device"
        case .passkey: "My passkey"
        case .recoveryCode: "A recovery code"
        case .other(let kind): kind
        }
    }
}
