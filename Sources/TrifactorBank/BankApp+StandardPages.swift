import Crypto
import Foundation
import HTTP
import Logging
import Store
import TrifactorKit
import WebUI

/// The standard path's transfers and pages: a transfer becomes a `payment_initiation` the customer approves on
/// Trifactor's payment page; the bank spends the approval once (`SignInWithTrifactor.spend`) just before its ledger
/// moves, under the transfer's id, so Back, a reload or twenty racing callbacks move the money once. Pages that on the
/// SDK path call Trifactor with the customer's session (settings, confirming it's them) say where those things are.
extension BankApp {
    /// `POST /transfer/approve-at-trifactor`: pushes the transfer as a payment and sends the browser to approve it.
    func startStandardTransfer(_ request: Request) throws -> Response {
        let (session, form, _) = try posted(request)
        let (_, customer) = try self.customer(request)
        guard let pending = session.pendingTransfer(form["transfer"] ?? "") else {
            return gone(session, form["transfer"] ?? "", request)
        }
        let details = try paymentDetails(pending, customer: customer)
        return try pushStandard(
            session, request, purpose: .transfer(pending.id), loginHint: email(of: session), details: details,
            failed: { sentence in
                session.flash(sentence + " Nothing was moved.")
                return redirect("/transfers/\(pending.id)")
            })
    }

    /// The transfer as RFC 9396 details: one `payment_initiation` naming the amount, the payee and both IBANs, and
    /// the reference. The exact bytes are pushed, approved and spent.
    func paymentDetails(_ pending: PendingTransfer, customer: String) throws -> String {
        let accounts = try ledger.accounts(of: customer)
        // Only the signed-in customer's own account pays: a transfer kept from another session pays nothing.
        guard let debtor = accounts.first(where: { $0.id == pending.from })?.iban else {
            throw Ledger.Refusal.unknownAccount
        }
        var payment: [String: Any] = [
            "type": "payment_initiation",
            "instructedAmount": ["currency": pending.amount.currency, "amount": pending.amount.plain],
        ]
        payment["debtorAccount"] = ["iban": debtor.electronic]
        switch pending.to {
        case .payee(let name, let iban):
            payment["creditorName"] = name
            payment["creditorAccount"] = ["iban": iban.electronic]
        case .account(let id):
            let name = try database.read {
                try $0.queryOne("SELECT name FROM bank_customers WHERE id = $1", [.text(customer)])?.text("name")
            }
            let account = accounts.first(where: { $0.id == id })
            // The holder, and which of their accounts, as the bank's review says it ("your Saving"): the payment page
            // and its text name the same account the customer chose.
            let holder = (name ?? "You").trimmingCharacters(in: .whitespaces)
            // At most 70 characters (the payment's limit): the holder is shortened, the account kept whole.
            payment["creditorName"] =
                account.map { account -> String in
                    let suffix = " (\(account.name))"
                    let kept = String(holder.prefix(max(1, 70 - suffix.count))).trimmingCharacters(in: .whitespaces)
                    return kept + suffix
                } ?? String(holder.prefix(70))
            if let iban = account?.iban {
                payment["creditorAccount"] = ["iban": iban.electronic]
            }
        }
        if let reference = pending.reference { payment["remittanceInformationUnstructured"] = reference }
        let data = try JSONSerialization.data(
            withJSONObject: [payment], options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    /// The approved transfer: the details the tokens carry are spent for exactly this transfer, then the ledger moves
    /// once (its idempotency key is the transfer's id).
    func completeStandardTransfer(
        _ session: BankSession, _ request: Request, id: String, tokens: SignInWithTrifactor.Tokens,
        client: SignInWithTrifactor
    ) -> Response {
        if session.flows({ $0.sent[id] }) != nil { return redirect("/transfers/\(id)") }
        guard let pending = session.pendingTransfer(id), let customer = session.customerID,
            tokens.idToken.subject == session.standardSubject
        else {
            session.flash("This transfer is no longer waiting. Nothing was moved.")
            return redirect("/transfer")
        }
        session.dropTransfer(id)
        // The approval's sign-in is Trifactor's newest session for this customer: its logout must end this one.
        session.set(standard: Self.standardSignIn(tokens))
        do {
            let details = try paymentDetails(pending, customer: customer)
            try blocking({ try await client.spend(tokens, authorizationDetails: details) })
        } catch let refusal as Ledger.Refusal {
            session.flash(refusal.description + " Nothing was moved.")
            return redirect("/transfer")
        } catch {
            logger.log(.info, "bank_spend_refused", ["error": .string(String(describing: error))])
            session.flash("The approval could not be used: \(Self.standardSentence(error)) Nothing was moved.")
            return redirect("/transfer")
        }
        do {
            _ = try ledger.transfer(
                .init(
                    idempotencyKey: pending.id, from: pending.from, to: pending.to, amount: pending.amount,
                    // The approval's grant, by its access token's hash: one per transfer.
                    authorizationID: "details:" + SHA256.hex(tokens.accessToken), memo: Self.memo(pending),
                    reference: pending.reference), now: now())
        } catch let refusal as Ledger.Refusal {
            session.flash(refusal.description + " Nothing was moved.")
            return redirect("/transfer")
        } catch {
            logger.log(.error, "bank_transfer_failed", ["error": .string(String(reflecting: error))])
            session.flash("The transfer could not be made. Nothing was moved.")
            return redirect("/transfer")
        }
        let sent = "Sent \(pending.amount.description) to \(pending.toLabel)."
        session.flows { $0.sent[pending.id] = sent }
        session.flash(sent)
        return redirect("/accounts")
    }

    /// The review of a transfer on the standard path: approved at Trifactor.
    func standardReviewPage(_ session: BankSession, _ request: Request, _ pending: PendingTransfer, notice: String?)
        -> HTML
    {
        Page.layout(
            "Check your transfer", screen(session, request, notice: notice, tab: .transfer),
            [
                summary(pending),
                Page.form(
                    "/transfer/approve-at-trifactor", session, class: "card stack",
                    [
                        Page.hidden("transfer", pending.id),
                        Page.paragraph(
                            "Trifactor, where you sign in, shows you this payment and asks you to approve it: with a "
                                + "code texted to your mobile, your passkey, or on your device."),
                        Page.button("Approve at Trifactor"),
                    ]),
                reviewActions(session, pending),
            ])
    }

    /// Where a signed-in standard-path session goes instead of a page that needs a Trifactor session token: settings
    /// and confirming it's them are Trifactor's; nil to go on.
    func standardDetour(_ session: BankSession, _ request: Request) -> Response? {
        guard session.standard != nil else { return nil }
        let path = request.path
        if path == "/settings" || path.hasPrefix("/settings/") || path.hasPrefix("/setup/") {
            guard request.method == "GET", path == "/settings" else { return redirect("/settings") }
            return page(standardSettingsPage(session, request))
        }
        if path == "/confirm" {
            guard session.isAway(now: now(), idle: configuration.idleTimeout) else { return redirect("/accounts") }
            return page(standardConfirmPage(session, request))
        }
        if path.hasPrefix("/confirm/"), path != "/confirm/trifactor" { return redirect("/confirm") }
        if ["/transfer/confirm", "/transfer/approve", "/transfer/resend", "/transfer/another"].contains(path)
            || path.hasPrefix("/transfer/passkey")
        {
            return redirect("/transfer")
        }
        return nil
    }

    /// `POST /confirm/trifactor`: back after the idle time, the customer confirms it's them at Trifactor (asked for
    /// their password and second factor again).
    func confirmAtTrifactor(_ request: Request) throws -> Response {
        let (session, _, _) = try posted(request)
        guard session.standard != nil, session.isSignedIn else { return redirect("/") }
        return try pushStandard(
            session, request, purpose: .comeBack, loginHint: email(of: session), prompt: .login,
            failed: { sentence in
                session.flash(sentence)
                return redirect("/confirm")
            })
    }

    func standardConfirmPage(_ session: BankSession, _ request: Request) -> HTML {
        Page.layout(
            "Confirm it's you", screen(session, request, notice: session.takeNotice()),
            [
                Page.paragraph("You were away for a while, so your balances are hidden until you confirm it's you."),
                Page.form(
                    "/confirm/trifactor", session, class: "card stack", [Page.button("Confirm at Trifactor")]),
                Page.form("/signout", session, [Page.button("Sign out", kind: "link")]),
            ])
    }

    func standardSettingsPage(_ session: BankSession, _ request: Request) -> HTML {
        Page.layout(
            "Settings", screen(session, request, tab: .settings),
            [
                .element(
                    "div", ["class": "card stack"],
                    [
                        .element("h2", [:], ["Signing in"]),
                        Page.paragraph(
                            "You sign in to Trifactor Bank at Trifactor, which keeps your password, your mobile, "
                                + "your passkeys, your authenticator app and your recovery codes, and shows your "
                                + "picture and phrase before you type your password."),
                        Page.paragraph("Signed in as \(email(of: session) ?? "")."),
                        Page.paragraph(
                            "Trifactor's security page lists your second factors, passkeys and devices, where you are "
                                + "signed in (by browser and system, like “Chrome on macOS”) and what happened lately. "
                                + "If something there was not you, it signs you out everywhere."),
                        securityPageLink.map {
                            Page.link("Open your security page at Trifactor", $0, class: "button secondary")
                        }
                            ?? .empty,
                    ])
            ]
                + (isStaff(session)
                    ? [
                        .element(
                            "div", ["class": "card stack"],
                            [
                                .element("h2", [:], ["Staff"]),
                                Page.link("Bank by phone", "/staff/phone", class: "button secondary"),
                            ])
                    ] : [])
                + [Page.form("/signout", session, [Page.button("Sign out", kind: "secondary")])])
    }

    /// Trifactor's security page, where a standard-path customer manages how they sign in.
    var securityPageLink: String? {
        standardClients?.first.map { client in
            var issuer = client.issuer.absoluteString
            while issuer.hasSuffix("/") { issuer.removeLast() }
            return issuer + "/account"
        }
    }

    /// The signed-in customer's email.
    func email(of session: BankSession) -> String? {
        if case .signedIn(_, let email) = session.stage { email } else { nil }
    }

    /// RP-initiated logout at Trifactor for a standard-path session (OpenID Connect RP-Initiated Logout 1.0 §2): the
    /// browser goes to Trifactor's end-session endpoint with the ID token as hint and comes back to the start page.
    func standardSignOutURL(_ standard: BankSession.StandardSignIn, _ request: Request) -> String? {
        guard let client = standardClient(request),
            let endpoint = try? blocking({ try await client.metadata() }).endSessionEndpoint,
            var components = URLComponents(url: endpoint, resolvingAgainstBaseURL: false)
        else { return nil }
        var back = URLComponents(url: client.redirectURI, resolvingAgainstBaseURL: false)!
        back.path = "/"
        back.query = "signed_out=1"
        components.queryItems = [
            URLQueryItem(name: "id_token_hint", value: standard.idToken),
            URLQueryItem(name: "client_id", value: client.clientID),
            URLQueryItem(name: "post_logout_redirect_uri", value: back.url?.absoluteString),
        ]
        return components.url?.absoluteString
    }
}
