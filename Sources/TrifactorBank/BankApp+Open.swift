import Foundation
import HTTP
import Phone
import Sitekeys
import Store
import TrifactorKit
import WebUI

/// Opening an account: name, email, password, mobile number and a sitekey;
/// the email confirmed by code (the bank's customer and accounts exist from
/// then on); the mobile enrolled as the second factor; then signed in. Every
/// code page can send a new code and start again; the mobile page can change
/// the number. An opening left half way carries on: the same email and
/// password on the form again pick up where it stopped, and signing in with
/// a password alone leads to adding the mobile.
extension BankApp {
    static let openingBalances: (checking: Int64, saving: Int64) = (250_000, 1_000_000)
    /// The opening form's fields that a refused form keeps (never the password).
    static let openingFields = ["name", "email", "phone", "picture", "phrase"]
    /// A Trifactor account created less than this before the form was posted is the one the form just made (allowing
    /// for the two servers' clocks to differ a little).
    static let newAccountWindow: TimeInterval = 120

    /// The routes of opening an account, its email and mobile steps: each HTTP method and path, and the handler that answers it.
    func addOpening(_ router: inout Router) {
        route(&router, "GET", "/open", showOpening)
        route(&router, "POST", "/open", submitOpening)
        route(&router, "GET", "/open/verify", showOpeningEmail)
        route(&router, "POST", "/open/verify", verifyOpeningEmail)
        route(&router, "POST", "/open/verify/resend", resendOpeningEmail)
        route(&router, "POST", "/open/restart", startOpeningAgain)
        route(&router, "GET", "/open/phone", showOpeningPhone)
        route(&router, "POST", "/open/phone", confirmOpeningPhone)
        route(&router, "POST", "/open/phone/resend", resendOpeningText)
        route(&router, "POST", "/open/phone/number", changeOpeningNumber)
    }

    /// `GET /open`: the form that opens an account (or the opening's current step).
    func showOpening(_ request: Request) -> Response {
        let (viewer, cookies) = self.viewer(request)
        if viewer.isSignedIn { return redirect("/accounts") }
        if let session = viewer as? BankSession, session.flows({ $0.opening }) != nil {
            return redirect(currentStep(session))
        }
        let draft = self.draft(for: "/open", viewer, request)
        return page(
            openPage(viewer, request, draft: draft, notice: (viewer as? BankSession)?.takeNotice()), cookies: cookies)
    }

    /// `POST /open`: checks the form, creates the Trifactor account or carries a half-way opening on.
    func submitOpening(_ request: Request) throws -> Response {
        let (viewer, form) = try postedBeforeSession(request)
        var errors: [String: String] = [:]
        let name = form["name"] ?? ""
        if name.isEmpty || name.count > 70 { errors["name"] = "Enter your name (up to 70 characters)." }
        let email = (form["email"] ?? "").lowercased()
        if !Self.looksLikeEmail(email) { errors["email"] = "Enter your email address, like ann@example.com." }
        let password = form.raw("password") ?? ""
        if password.isEmpty { errors["password"] = "Choose a password." }
        let phone = Self.mobile(form["phone"] ?? "", errors: &errors)
        var sitekey: Sitekey?
        do throws(Sitekey.Refusal) {
            sitekey = try Sitekey(picture: form["picture"] ?? "", phrase: form["phrase"] ?? "")
        } catch {
            errors[error == .unknownPicture ? "picture" : "phrase"] = error.description
        }
        guard errors.isEmpty, let phone, let sitekey else {
            return back(to: "/open", viewer, FormDraft(form, keeping: Self.openingFields, errors: errors))
        }
        let (session, cookies) = startSession(viewer)
        session.dropSignIn()
        session.set(stage: .start)
        session.flows { $0.reset = nil }
        let client = trifactor(session, request)
        let started = now()
        do {
            try blocking({ try await client.signUp(email: email, password: password, displayName: name) })
        } catch let error as TrifactorError where !(error.problem?.invalidFields.isEmpty ?? true) {
            for field in error.problem?.invalidFields ?? [] {
                errors[field.name == "display_name" ? "name" : field.name] = Self.fieldSentence(field)
            }
            return back(
                to: "/open", session, FormDraft(form, keeping: Self.openingFields, errors: errors), cookies: cookies)
        } catch let error as TrifactorError where error.problem != nil {
            return back(
                to: "/open", session,
                FormDraft(form, keeping: Self.openingFields, errors: ["form": Self.sentence(error)]), cookies: cookies)
        }
        var opening = Opening(
            name: name, email: email, password: password, phone: phone.e164, sitekey: sitekey, emailWindow: started)
        // Starting again buys no guesses: Trifactor's window of wrong email codes still runs.
        if let kept = session.flows({ $0.openingTries[email] }),
            started < kept.window.addingTimeInterval(Self.emailCodeWindow)
        {
            (opening.emailTries, opening.emailWindow) = (kept.tries, kept.window)
        }
        // A known email with this password is an opening left half way, or a customer of another Trifactor app.
        switch try? blocking({ try await client.signIn(email: email, password: password) }) {
        case .signedIn?:
            let user = (try? blocking({ try await client.currentSession() }))?.user
            if user?.emailVerified == true {
                opening.emailVerified = true
                try createCustomer(opening, update: true)
                giveTrifactor(opening.sitekey, client)
                session.flows { $0.opening = opening }
                return sendOpeningText(session, request, cookies: cookies)
            }
            // Signing up again sent no code to an account made earlier: ask for a new one. (A new account has its code:
            // a resend would replace it. Trifactor's answer is the same for both, so the account's age tells them apart.)
            if let user, user.createdAt < started.addingTimeInterval(-Self.newAccountWindow) {
                try? blocking({ try await client.resendVerification(to: email) })
            }
        case .secondFactorRequired?:
            try createCustomer(opening, update: false)
            try? blocking({ try await client.signOut() })
            session.flash("You already have an account with this email: sign in to see it.")
            return redirect("/", cookies: cookies)
        case nil:
            break
        }
        session.flows { $0.opening = opening }
        return redirect("/open/verify", cookies: cookies)
    }

    /// `GET /open/verify`: the page for the code emailed to a new customer.
    func showOpeningEmail(_ request: Request) -> Response {
        let session = self.session(request).session
        guard let session, let opening = session.flows({ $0.opening }), !opening.emailVerified else {
            return outOfStep(session, request)
        }
        let draft = session.draft(for: "/open/verify", now: now())
        return page(
            openEmailPage(session, request, opening, error: draft?.errors["code"], notice: session.takeNotice()))
    }

    /// `POST /open/verify`: the emailed code confirms the address; the customer and accounts are made.
    func verifyOpeningEmail(_ request: Request) throws -> Response {
        let (session, form, _) = try posted(request)
        guard var opening = session.flows({ $0.opening }), !opening.emailVerified else {
            return outOfStep(session, request)
        }
        let client = trifactor(session, request)
        let email = opening.email
        do {
            try blocking({ try await client.verifyEmail(email, code: form["code"] ?? "") })
        } catch let error as TrifactorError where error.problem?.code == .invalidCode {
            opening.emailTries += 1
            session.flows { $0.opening = opening }
            let left = Self.emailCodeTries - opening.emailTries
            return back(
                to: "/open/verify", session,
                FormDraft(errors: [
                    "code": left > 0
                        ? "That code is wrong. \(left) more \(left == 1 ? "try" : "tries")."
                        : Self.emailLocked(window: opening.emailWindow, now: now())
                ]))
        } catch {
            return back(to: "/open/verify", session, FormDraft(errors: ["code": Self.sentence(error)]))
        }
        opening.emailVerified = true
        session.flows { $0.opening = opening }
        let (password, name) = (opening.password, opening.name)
        switch try blocking({ try await client.signIn(email: email, password: password) }) {
        case .signedIn:
            try createCustomer(opening, update: true)
            giveTrifactor(opening.sitekey, client)
            return sendOpeningText(session, request)
        case .secondFactorRequired:
            // The email had second factors already: an existing Trifactor user; sign in as usual.
            try createCustomer(opening, update: false)
            session.flows { $0.opening = nil }
            session.flash("Your bank account is ready, \(name). Sign in to see it.")
            return redirect("/")
        }
    }

    /// `POST /open/verify/resend`: a new email code, within Trifactor's window of wrong codes.
    func resendOpeningEmail(_ request: Request) throws -> Response {
        let (session, _, _) = try posted(request)
        guard var opening = session.flows({ $0.opening }), !opening.emailVerified else {
            return outOfStep(session, request)
        }
        let client = trifactor(session, request)
        let email = opening.email
        if now() >= opening.emailWindow.addingTimeInterval(Self.emailCodeWindow) {
            opening.emailTries = 0
            opening.emailWindow = now()
        } else if opening.emailTries >= Self.emailCodeTries {
            session.flash(Self.emailLocked(window: opening.emailWindow, now: now(), typed: false))
            return redirect("/open/verify")
        }
        do {
            try blocking({ try await client.resendVerification(to: email) })
            session.flows { $0.opening = opening }
            session.flash(
                "We sent a new code to \(email). It can take a minute to arrive; the old one no longer works.")
        } catch {
            session.flash(Self.sentence(error))
        }
        return redirect("/open/verify")
    }

    /// `POST /open/restart`: back to the opening form, keeping the name and email.
    func startOpeningAgain(_ request: Request) throws -> Response {
        let (session, _, _) = try posted(request)
        guard let opening = session.flows({ $0.opening }) else { return outOfStep(session, request) }
        let client = trifactor(session, request)
        try? blocking({ try await client.signOut() })
        session.keep(FormDraft(values: ["name": opening.name, "email": opening.email]), for: "/open", now: now())
        return restartOpening(
            session,
            saying:
                "Start again: fill in the form. An account you began with this email carries on when you use the same password."
        )
    }

    /// "That was the fifth wrong code: no email code works until 14:32 UTC (in 7 minutes). Then send a new code." Not
    /// `typed` (a new code asked for, a page shown again): "After five wrong codes, no email code works until …".
    static func emailLocked(window: Date, now: Date, typed: Bool = true) -> String {
        let until = window.addingTimeInterval(emailCodeWindow)
        return
            (typed
            ? "That code is wrong, and that was the fifth try: for your safety"
            : "After five wrong codes, for your safety")
            + " no email code works until \(dayAndTime(until).time) (in \(duration(max(1, until.timeIntervalSince(now))))). Then send a new code."
    }

    /// Drops the opening under way and sends the browser to the form with `text`.
    func restartOpening(_ session: BankSession, saying text: String) -> Response {
        session.dropSignIn()
        session.set(stage: .start)
        session.flows { flows in
            if let opening = flows.opening, !opening.emailVerified {
                flows.openingTries[opening.email] = EmailTries(tries: opening.emailTries, window: opening.emailWindow)
            }
            flows.opening = nil
        }
        session.flash(text)
        return redirect("/open")
    }

    /// A mobile number from a form: E.164 when it can receive texts, else nil with the sentence in `errors["phone"]`.
    static func mobile(_ text: String, errors: inout [String: String]) -> PhoneNumber? {
        do {
            let number = try PhoneNumber(parsing: text, region: "GB")
            if number.canReceiveSMS { return number }
            errors["phone"] = "Enter a mobile number: this one cannot receive text messages."
        } catch { errors["phone"] = "Enter your mobile number in international form, like +44 7400 123456." }
        return nil
    }

    /// The customer and their two accounts, in one transaction. For an email that has a customer already, `update`
    /// takes the opening's name, mobile and sitekey (an opening carried on: the password was proven); otherwise nothing changes.
    func createCustomer(_ opening: Opening, update: Bool) throws {
        try database.transaction { db in
            if try db.queryOne("SELECT id FROM bank_customers WHERE email = $1", [.text(opening.email)]) != nil {
                guard update else { return }
                try db.execute(
                    // A customer bound to a Trifactor user (the standard path) is theirs: an opening by address never
                    // rewrites it.
                    "UPDATE bank_customers SET name = $2, phone = $3, sitekey_picture = $4, sitekey_phrase = $5 WHERE email = $1 AND trifactor_subject IS NULL",
                    [
                        .text(opening.email), .text(opening.name), .text(opening.phone), .text(opening.sitekey.picture),
                        .text(opening.sitekey.phrase),
                    ])
                return
            }
            let id = UUID().uuidString.lowercased()
            try db.execute(
                """
                INSERT INTO bank_customers (id, email, name, phone, sitekey_picture, sitekey_phrase, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
                """,
                [
                    .text(id), .text(opening.email), .text(opening.name), .text(opening.phone),
                    .text(opening.sitekey.picture),
                    .text(opening.sitekey.phrase), .int(now().millis),
                ])
            _ = try ledger.openAccounts(
                for: id, currency: "EUR", checking: Self.openingBalances.checking, saving: Self.openingBalances.saving,
                now: now(), on: db)
        }
    }

    /// Whether a typed email can be one (Trifactor checks it fully): one "@", no space, at most 254 characters.
    package static func looksLikeEmail(_ email: String) -> Bool {
        email.count <= 254 && email.split(separator: "@").count == 2 && !email.contains(" ")
    }

    /// Trifactor's reason for a refused field as a sentence: "is too common: …" becomes "This password is too common: …".
    static func fieldSentence(_ field: ServerProblem.InvalidField) -> String {
        var reason = field.reason
        if ["is ", "must ", "cannot ", "contains "].contains(where: reason.hasPrefix) {
            let noun =
                switch field.name {
                case "password", "new_password", "current_password": "password"
                case "email": "email address"
                case "display_name": "name"
                case "phone": "number"
                default: field.name.replacingOccurrences(of: "_", with: " ")
                }
            reason = "This \(noun) \(reason)"
        }
        reason = reason.prefix(1).uppercased() + reason.dropFirst()
        return reason.hasSuffix(".") ? reason : reason + "."
    }
}
