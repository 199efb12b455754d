import Foundation
import HTTP
import Logging
import Store
import TrifactorKit
import WebUI

/// "Bank by phone": a member of staff (signed in through Trifactor, listed by `trifactor-bank staff add EMAIL`) types a
/// caller's email and what they are about to do for them ("Transfer EUR 250.00 to Erika Mustermann"); Trifactor asks
/// the customer on their own device (OpenID CIBA, the bank's client polling), showing that message beside the numbers,
/// and the customer picks the number the agent reads out. The agent's page shows the outcome as it comes, and how the
/// customer proved it (their device; a link texted to their phone is one factor only). An email nobody has gets the
/// same page, and then expires: the agent learns nothing a caller could not.
extension BankApp {
    /// A request started from the staff page and not yet finished with.
    struct PhoneRequest: Sendable {
        let id: String
        let authentication: SignInWithTrifactor.BackchannelAuthentication
        let email: String
        let message: String
        let started: Date
        /// Seconds between polls: Trifactor's, 5 more after each `slow_down`.
        var interval: TimeInterval
        /// Trifactor is asked no earlier than this (a reload, Back or a second tab does not poll early).
        var nextPoll: Date
        /// Set once the request ended: what the page says from then on.
        var outcome: String?
        var approved = false
    }

    /// The routes of bank by phone (the standard path only): each HTTP method and path, and its handler.
    func addByPhone(_ router: inout Router) {
        guard configuration.standard != nil else { return }
        route(&router, "GET", "/staff/phone", showByPhone)
        route(&router, "POST", "/staff/phone", startByPhone)
        route(&router, "GET", "/staff/phone/:id", showPhoneRequest)
    }

    /// The signed-in staff member's session, or the page that says this is for staff.
    func staff(_ request: Request) throws(Refusal) -> BankSession {
        let (session, _) = try customer(request)
        guard isStaff(session), session.standard != nil else {
            throw Refusal(
                response: page(
                    Page.layout(
                        "For staff only", screen(session, request),
                        [
                            Page.paragraph("Bank by phone is for the bank's staff."),
                            Page.link("Your accounts", "/accounts", class: "button primary"),
                        ]), status: 403))
        }
        return session
    }

    /// Whether the signed-in customer is on the staff list.
    func isStaff(_ session: BankSession) -> Bool {
        guard let email = email(of: session) else { return false }
        return
            (try? database.read {
                try $0.queryOne("SELECT email FROM bank_staff WHERE email = $1", [.text(email)]) != nil
            }) ?? false
    }

    /// `GET /staff/phone`: the caller's email and the message their device will show.
    func showByPhone(_ request: Request) throws -> Response {
        let session = try staff(request)
        let draft = session.draft(for: "/staff/phone", now: now())
        return page(byPhonePage(session, request, draft: draft, notice: session.takeNotice()))
    }

    /// `POST /staff/phone`: asks Trifactor to have the customer approve on their device.
    func startByPhone(_ request: Request) throws -> Response {
        let (session, form, _) = try posted(request)
        _ = try staff(request)
        let email = (form["email"] ?? "").trimmingCharacters(in: .whitespaces).lowercased()
        let message = (form["message"] ?? "").trimmingCharacters(in: .whitespaces)
        var errors: [String: String] = [:]
        if !Self.looksLikeEmail(email) { errors["email"] = "Enter the customer's email, like ann@example.com." }
        if message.isEmpty || message.count > 100 || Self.hasControls(message) {
            errors["message"] = "Say what the customer approves, in up to 100 characters."
        }
        guard errors.isEmpty, let client = standardClient(request) else {
            return back(
                to: "/staff/phone", session, FormDraft(values: ["email": email, "message": message], errors: errors))
        }
        let started: SignInWithTrifactor.BackchannelAuthentication
        do {
            started = try blocking({
                try await client.backchannelAuthentication(loginHint: email, bindingMessage: message)
            })
        } catch {
            logger.log(.info, "bank_by_phone_refused", ["error": .string(String(describing: error))])
            return back(
                to: "/staff/phone", session,
                FormDraft(
                    values: ["email": email, "message": message],
                    errors: ["message": Self.standardSentence(error)]))
        }
        let id = UUID().uuidString.lowercased()
        let now = now()
        session.flows { flows in
            if flows.phoneRequests.count >= 20,
                let oldest = flows.phoneRequests.values.min(by: { $0.started < $1.started })
            {
                flows.phoneRequests[oldest.id] = nil
            }
            flows.phoneRequests[id] = PhoneRequest(
                id: id, authentication: started, email: email, message: message, started: now,
                interval: started.interval, nextPoll: now.addingTimeInterval(started.interval))
        }
        return redirect("/staff/phone/\(id)")
    }

    /// `GET /staff/phone/:id`: the request's state, asked of Trifactor once per view while it waits (the page
    /// refreshes at the interval Trifactor gave).
    func showPhoneRequest(_ request: Request) throws -> Response {
        let session = try staff(request)
        let id = request.parameters["id"] ?? ""
        let now = now()
        // Taken under the session's lock: of two views at once, one polls; the other shows the state as it is.
        let due: PhoneRequest?? = session.flows { flows in
            guard var phone = flows.phoneRequests[id] else { return .none }
            guard phone.outcome == nil, now >= phone.nextPoll else { return .some(nil) }
            phone.nextPoll = now.addingTimeInterval(phone.interval)
            flows.phoneRequests[id] = phone
            return .some(phone)
        }
        guard case .some(let polling) = due else {
            session.flash("That request is no longer here. Start a new one.")
            return redirect("/staff/phone")
        }
        if let polling, let client = standardClient(request) {
            let authentication = polling.authentication
            var outcome: (text: String, approved: Bool)?
            var slowDown = false
            do {
                switch try blocking({ try await client.poll(authentication) }) {
                case .pending(let slow): slowDown = slow
                case .approved(let tokens):
                    let how =
                        (tokens.idToken.level ?? .password) >= .multiFactor
                        ? "on their device" : "with the link texted to their phone (one factor only)"
                    outcome = ("\(polling.email) approved \(how).", true)
                }
            } catch let error as TrifactorError where error.code == .expired {
                outcome = ("Nobody approved in time. Nothing was approved.", false)
            } catch let error as TrifactorError where error.oauthError?.error == "access_denied" {
                outcome = ("The customer declined, or picked another number. Nothing was approved.", false)
            } catch let error as TrifactorError where error.oauthError?.error == "invalid_grant" {
                // Answered in another view already: that view's outcome stands (kept below if it is not there yet).
                outcome = ("This request was answered; see your other window for the outcome.", false)
            } catch {
                logger.log(.info, "bank_by_phone_poll_failed", ["error": .string(String(describing: error))])
            }
            session.flows { flows in
                guard var stored = flows.phoneRequests[id] else { return }
                if slowDown {
                    stored.interval += 5
                    stored.nextPoll = now.addingTimeInterval(stored.interval)
                }
                // The first outcome stands: a later view never writes over it.
                if stored.outcome == nil, let outcome { (stored.outcome, stored.approved) = outcome }
                flows.phoneRequests[id] = stored
            }
        }
        guard let phone = session.flows({ $0.phoneRequests[id] }) else { return redirect("/staff/phone") }
        return page(phoneRequestPage(session, request, phone))
    }

    func byPhonePage(_ session: BankSession, _ request: Request, draft: FormDraft?, notice: String?) -> HTML {
        let errors = draft?.errors ?? [:]
        return Page.layout(
            "Bank by phone", screen(session, request, notice: notice),
            [
                Page.paragraph(
                    "The customer approves on their own device: type their email and what they are approving. "
                        + "Their device shows it beside three numbers; read them the number this page gives you."),
                Page.form(
                    "/staff/phone", session, class: "card stack",
                    [
                        Page.field(
                            "Customer's email", name: "email", type: "email", value: draft?["email"],
                            error: errors["email"], autocomplete: "off", autofocus: true),
                        Page.field(
                            "What they approve", name: "message", value: draft?["message"],
                            error: errors["message"], hint: "Like “Transfer EUR 250.00 to Erika Mustermann”.",
                            autocomplete: "off", maxlength: 100),
                        Page.button("Ask the customer"),
                    ]),
            ])
    }

    func phoneRequestPage(_ session: BankSession, _ request: Request, _ phone: PhoneRequest) -> HTML {
        var body: [HTML] = [
            .element(
                "dl", ["class": "summary card"],
                [
                    .element("dt", [:], ["Customer"]), .element("dd", [:], [.text(phone.email)]),
                    .element("dt", [:], ["Their device shows"]), .element("dd", [:], [.text(phone.message)]),
                ])
        ]
        if let outcome = phone.outcome {
            body.append(Page.paragraph(outcome, class: phone.approved ? "notice" : "error"))
            body.append(Page.link("Ask another customer", "/staff/phone", class: "button primary"))
        } else {
            body.append(
                .element(
                    "div", ["class": "card"],
                    [
                        Page.paragraph("Ask the customer to open Trifactor on their device and pick this number:"),
                        .element(
                            "p", ["class": "number", "aria-live": "polite"],
                            [.text(phone.authentication.bindingNumber.map(String.init) ?? "–")]),
                        Page.paragraph(
                            "This page shows the answer by itself. If the email has no account here, or no device "
                                + "or phone to ask, nobody answers and the request ends unanswered.", class: "muted"),
                    ]))
            body.append(Page.link("Start again", "/staff/phone"))
        }
        let refresh = phone.outcome == nil ? max(2, Int(phone.interval)) : nil
        return Page.layout(
            phone.outcome == nil ? "Waiting for the customer" : "The customer answered",
            screen(session, request, refresh: refresh), body)
    }
}
