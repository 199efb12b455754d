import Foundation
import HTTP
import Store
import TrifactorKit
import WebUI

/// Transfers: the form, the review, the code (or passkey), each a page of
/// /transfers/ID that renders the transfer kept in the session. Each is
/// confirmed by a Trifactor authorization bound to its amount, payee and
/// source, spent (`consume`) for exactly that action just before the ledger
/// moves, once: a resent form or a refresh shows that it was sent.
extension BankApp {
    /// The routes of transfers, from the form to the money moving: each HTTP method and path, and the handler that answers it.
    func addTransfers(_ router: inout Router) {
        route(&router, "GET", "/transfer", showTransfer)
        route(&router, "POST", "/transfer", submitTransfer)
        route(&router, "GET", "/transfers/:id", showPendingTransfer)
        route(&router, "POST", "/transfer/confirm", authorizeTransfer)
        route(&router, "POST", "/transfer/approve", approveTransfer)
        route(&router, "POST", "/transfer/resend", resendTransferCode)
        route(&router, "POST", "/transfer/another", transferAnotherWay)
        route(&router, "POST", "/transfer/cancel", cancelTransfer)
        route(&router, "POST", "/transfer/passkey/options", transferPasskeyOptions)
        route(&router, "POST", "/transfer/passkey", approveTransferWithPasskey)
    }

    /// `GET /transfer`: the transfer form, with what was typed.
    func showTransfer(_ request: Request) throws -> Response {
        let (session, customer) = try customer(request)
        var draft = session.draft(for: "/transfer", now: now())
        if draft == nil, let id = request.query["change"], let pending = session.pendingTransfer(id) {
            draft = pending.form
        }
        return page(
            transferPage(
                session, request, accounts: try ledger.accounts(of: customer), draft: draft,
                notice: session.takeNotice()))
    }

    /// `POST /transfer`: checks the form and keeps the transfer for its review page.
    func submitTransfer(_ request: Request) throws -> Response {
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
            if name.isEmpty || name.count > 70 || Self.hasControls(name) {
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
        do throws(Amount.Refusal) {
            amount = try Amount(parsing: form["amount"] ?? "", currency: from?.balance.currency ?? "EUR")
        } catch {
            errors["amount"] = error.description
        }
        if let amount, let from, amount > from.balance {
            errors["amount"] = "That is more than the \(from.balance.description) in \(from.name)."
        }
        let reference = form["reference"].flatMap { $0.isEmpty ? nil : $0 }
        if let reference, reference.count > 140 || Self.hasControls(reference) {
            errors["reference"] = "A reference has up to 140 characters."
        }
        let typed = FormDraft(
            form, keeping: ["from", "to", "payee_name", "iban", "amount", "reference"], errors: errors)
        guard errors.isEmpty, let from, let destination, let amount else {
            return back(to: "/transfer", session, typed)
        }
        let pending = PendingTransfer(
            id: UUID().uuidString.lowercased(), from: from.id, fromName: from.name, to: destination, toLabel: label,
            amount: amount, reference: reference, form: typed)
        session.store(pending)
        return redirect("/transfers/\(pending.id)")
    }

    /// `GET /transfers/:id`: a transfer's review, its code page, or that it was sent.
    func showPendingTransfer(_ request: Request) throws -> Response {
        let (session, _) = try customer(request)
        let id = request.parameters["id"] ?? ""
        if let sent = session.flows({ $0.sent[id] }) {
            return page(
                Page.layout(
                    "Transfer sent", screen(session, request, tab: .transfer),
                    [
                        Page.paragraph(sent, class: "notice"),
                        Page.paragraph("It was sent once; opening this page again sends nothing.", class: "muted"),
                        Page.actions([
                            Page.link("Your accounts", "/accounts", class: "button primary"),
                            Page.link("Make another transfer", "/transfer"),
                        ]),
                    ]))
        }
        guard let pending = session.pendingTransfer(id) else { return gone(session, id, request) }
        let draft = session.draft(for: "/transfers/\(id)", now: now())
        if session.standard != nil {
            return page(standardReviewPage(session, request, pending, notice: session.takeNotice()))
        }
        if pending.authorizationID == nil {
            return page(
                reviewPage(
                    session, request, pending, factors: try transferFactors(session, request),
                    notice: session.takeNotice()))
        }
        return page(
            approvePage(
                session, request, pending, error: draft?.errors["code"],
                notice: session.takeNotice()))
    }

    /// `POST /transfer/confirm`: describes the transfer to Trifactor for the chosen factor.
    func authorizeTransfer(_ request: Request) throws -> Response {
        let (session, form, _) = try posted(request)
        _ = try customer(request)
        guard let pending = session.pendingTransfer(form["transfer"] ?? "") else {
            return gone(session, form["transfer"] ?? "", request)
        }
        let factors = try transferFactors(session, request)
        guard let factor = factors.first(where: { $0.id == form["factor"] }) else {
            session.flash("Pick how to confirm. Nothing was moved.")
            return redirect("/transfers/\(pending.id)")
        }
        // A double click, or the same review confirmed in a second tab: the first request asks Trifactor; this one
        // waits for it and shows the code step it started, so one code is sent and the one sent stays valid.
        guard session.flows({ $0.authorizing.insert(pending.id).inserted }) else {
            var waits = 0
            while waits < 200, session.flows({ $0.authorizing.contains(pending.id) }) {
                usleep(50_000)
                waits += 1
            }
            return redirect("/transfers/\(pending.id)")
        }
        defer { session.flows { _ = $0.authorizing.remove(pending.id) } }
        if let current = session.pendingTransfer(pending.id), current.authorizationID != nil,
            current.factor?.id == factor.id
        {
            return redirect("/transfers/\(pending.id)")
        }
        return authorize(session, request, pending, with: factor, others: factors.filter { $0.id != factor.id })
    }

    /// `POST /transfer/approve`: the code approves the transfer, and the money moves once.
    func approveTransfer(_ request: Request) throws -> Response {
        let (session, form, _) = try posted(request)
        _ = try customer(request)
        guard let pending = session.pendingTransfer(form["transfer"] ?? ""), pending.authorizationID != nil else {
            return gone(session, form["transfer"] ?? "", request)
        }
        switch complete(pending, session, request, proof: .code(form["code"] ?? "")) {
        case .moved:
            return redirect("/accounts")
        case .wrongCode(let sentence):
            return back(to: "/transfers/\(pending.id)", session, FormDraft(errors: ["code": sentence]))
        case .ended(let sentence), .refused(let sentence):
            session.flash(sentence)
            return redirect(session.pendingTransfer(pending.id) == nil ? "/accounts" : "/transfers/\(pending.id)")
        }
    }

    /// `POST /transfer/resend`: the same authorization's challenge again.
    func resendTransferCode(_ request: Request) throws -> Response {
        let (session, form, _) = try posted(request)
        _ = try customer(request)
        guard let pending = session.pendingTransfer(form["transfer"] ?? ""), let factor = pending.factor else {
            return gone(session, form["transfer"] ?? "", request)
        }
        let others = try transferFactors(session, request).filter { $0.id != factor.id }
        return authorize(session, request, pending, with: factor, others: others, again: true)
    }

    /// `POST /transfer/another`: back to the review, to pick another factor.
    func transferAnotherWay(_ request: Request) throws -> Response {
        let (session, form, _) = try posted(request)
        _ = try customer(request)
        guard var pending = session.pendingTransfer(form["transfer"] ?? "") else {
            return gone(session, form["transfer"] ?? "", request)
        }
        pending.authorizationID = nil
        pending.passkeyOptions = nil
        session.store(pending)
        return redirect("/transfers/\(pending.id)")
    }

    /// `POST /transfer/cancel`: drops the transfer; nothing moves.
    func cancelTransfer(_ request: Request) throws -> Response {
        let (session, form, _) = try posted(request)
        _ = try customer(request)
        session.dropTransfer(form["transfer"] ?? "")
        session.flash("Transfer cancelled. Nothing was moved.")
        return redirect("/accounts")
    }

    /// Where a form for a transfer that is not waiting lands: its "sent" page when it was sent, else the form, saying so.
    /// A request that is no browser's navigation (a script resending the form) gets the same sentence as a 409 page.
    func gone(_ session: BankSession, _ id: String, _ request: Request) -> Response {
        let sent = session.flows { $0.sent[id] }
        guard Self.isNavigation(request) else {
            return page(
                Page.layout(
                    sent == nil ? "Transfer not waiting" : "Transfer sent", screen(session, request, tab: .transfer),
                    [
                        Page.paragraph(
                            sent.map { "\($0) It was sent once already. Nothing was moved this time." }
                                ?? "This transfer is no longer waiting. Nothing was moved."),
                        Page.link("Your accounts", "/accounts", class: "button primary"),
                    ]), status: 409)
        }
        if sent != nil { return redirect("/transfers/\(id)") }
        session.flash("This transfer is no longer waiting. Nothing was moved.")
        return redirect("/transfer")
    }

    /// Whether the request is a browser's navigation (a form posted from a page), which is answered with a redirect.
    static func isNavigation(_ request: Request) -> Bool {
        if let mode = request.header("sec-fetch-mode") { return mode == "navigate" }
        return request.header("accept")?.contains("text/html") == true
    }

    /// The factors a transfer can be confirmed with here (a passkey only where passkeys work).
    func transferFactors(_ session: BankSession, _ request: Request) throws -> [FactorHint] {
        let client = trifactor(session, request)
        let passkeys = Self.passkeysWork(request)
        return try blocking({ try await client.factors() }).map(FactorHint.init).filter {
            if case .phone = $0.kind { return true }
            return $0.kind == .totp || ($0.kind == .passkey && passkeys)
        }
    }

    /// Describes the transfer to Trifactor for `factor` and goes to its code page; a text that cannot be sent yet goes
    /// back to the review, offering the other ways. `again` ("Send a new code"): the same authorization's challenge
    /// again, so the code sent before stops working and the wrong codes typed so far still count (a new authorization
    /// only once its five minutes are over).
    func authorize(
        _ session: BankSession, _ request: Request, _ pending: PendingTransfer, with factor: FactorHint,
        others: [FactorHint],
        again: Bool = false
    ) -> Response {
        var pending = pending
        let client = trifactor(session, request)
        let action = Self.action(pending)
        let authorization: PendingAuthorization
        if again, let id = pending.authorizationID {
            do {
                let resent = try blocking({ try await client.resendAuthorization(id, for: action, with: factor) })
                pending.summary = resent.summary
                pending.wrongTries = 0
                if case .passkey(let options) = resent.challenge { pending.passkeyOptions = options }
                session.store(pending)
                session.flash(Self.newCodeSent(factor))
                return redirect("/transfers/\(pending.id)")
            } catch let error as TrifactorError where error.problem?.code == "authorization_not_found" {
                // Its five minutes are over: the transfer is described again below, for a new authorization.
            } catch {
                // Nothing was sent: the code sent before still works, unless it was tried too often already.
                let stillWorks =
                    pending.wrongTries < Self.textedCodeTries ? " The code we sent before still works." : ""
                session.flash(
                    Self.isSendLimit(error)
                        ? Self.cannotText(error, others: others) + stillWorks
                        : Self.sentence(error) + " Nothing was moved.")
                return redirect("/transfers/\(pending.id)")
            }
        }
        do {
            authorization = try blocking({ try await client.authorize(action, with: factor) })
        } catch {
            // Nothing was sent: an authorization already running (for another factor) keeps its code.
            session.flash(
                Self.isSendLimit(error)
                    ? Self.cannotText(error, others: others) : Self.sentence(error) + " Nothing was moved.")
            return redirect("/transfers/\(pending.id)")
        }
        pending.authorizationID = authorization.id
        pending.factor = factor
        pending.summary = authorization.summary
        pending.wrongTries = 0
        pending.passkeyOptions = nil
        if case .passkey(let options) = authorization.challenge { pending.passkeyOptions = options }
        session.store(pending)
        if again { session.flash(Self.newCodeSent(factor)) }
        return redirect("/transfers/\(pending.id)")
    }

    static func hasControls(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}
