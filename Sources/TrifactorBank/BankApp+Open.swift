import Foundation
import HTTP
import Phone
import Store
import TrifactorKit

/// Opening an account: name, email, password, mobile number and a sitekey;
/// the email confirmed by code; the mobile enrolled as the second factor;
/// then a checking and a saving account with demo opening balances.
extension BankApp {
    static let openingBalances: (checking: Int64, saving: Int64) = (250_000, 1_000_000)

    func addOpening(_ router: inout Router) {
        route(&router, "GET", "/open") { [self] request in
            let (viewer, cookies) = self.viewer(request)
            return page(openPage(viewer, form: nil, errors: [:]), cookies: cookies)
        }
        route(&router, "POST", "/open") { [self] request in
            let (viewer, form) = try postedBeforeSession(request)
            var errors: [String: String] = [:]
            let name = form["name"] ?? ""
            if name.isEmpty || name.count > 70 { errors["name"] = "Enter your name (up to 70 characters)." }
            let email = (form["email"] ?? "").lowercased()
            if email.count > 254 || email.split(separator: "@").count != 2 || email.contains(" ") { errors["email"] = "Enter your email address, like ann@example.com." }
            let password = form.raw("password") ?? ""
            var phone: PhoneNumber?
            do {
                let number = try PhoneNumber(parsing: form["phone"] ?? "", region: "GB")
                if number.canReceiveSMS { phone = number } else { errors["phone"] = "Enter a mobile number: this one cannot receive text messages." }
            } catch { errors["phone"] = "Enter your mobile number in international form, like +44 7400 123456." }
            var sitekey: Sitekey?
            do throws(Sitekey.Refusal) { sitekey = try Sitekey(picture: form["picture"] ?? "", phrase: form["phrase"] ?? "") } catch {
                errors[error == .unknownPicture ? "picture" : "phrase"] = error.description
            }
            guard errors.isEmpty, let phone, let sitekey else { return page(openPage(viewer, form: form, errors: errors), status: 422) }
            let (session, cookies) = startSession(viewer)
            let client = trifactor(session, request)
            do {
                try blocking({ try await client.signUp(email: email, password: password, displayName: name) })
            } catch let error as TrifactorError where !(error.problem?.invalidFields.isEmpty ?? true) {
                for field in error.problem?.invalidFields ?? [] { errors[field.name == "display_name" ? "name" : field.name] = Self.fieldSentence(field) }
                return page(openPage(session, form: form, errors: errors), status: 422, cookies: cookies)
            }
            session.set(opening: .init(name: name, email: email, password: password, phone: phone.e164, sitekey: sitekey))
            return redirect("/open/verify", cookies: cookies)
        }
        route(&router, "GET", "/open/verify") { [self] request in
            guard let session = self.session(request).session, let opening = session.opening else { return redirect("/open") }
            return page(openCodePage(session, title: "Check your email", text: "We sent a 6-digit code to \(opening.email).", action: "/open/verify", error: nil))
        }
        route(&router, "POST", "/open/verify") { [self] request in
            let (session, form, _) = try posted(request)
            guard var opening = session.opening else { return redirect("/open") }
            let client = trifactor(session, request)
            let email = opening.email
            if !opening.emailVerified {
                do {
                    try blocking({ try await client.verifyEmail(email, code: form["code"] ?? "") })
                } catch let error as TrifactorError where error.problem?.code == .invalidCode {
                    return page(openCodePage(session, title: "Check your email", text: "We sent a 6-digit code to \(opening.email).", action: "/open/verify",
                                             error: "That code is wrong or has expired."), status: 400)
                }
                opening.emailVerified = true
                session.set(opening: opening)
            }
            let (password, phone) = (opening.password, opening.phone)
            guard case .signedIn = try blocking({ try await client.signIn(email: email, password: password) }) else {
                // The email had second factors already: it is an existing Trifactor user; sign in as usual.
                try createCustomer(opening)
                session.set(opening: nil)
                session.flash("Your bank account is ready. Sign in to see it.")
                return redirect("/")
            }
            let enrollment: PendingEnrollment
            do { enrollment = try blocking({ try await client.enrollPhone(phone) }) } catch {
                // The email stays confirmed: trying again only sends the text.
                return page(Page.layout("No text could be sent", session: session, devPhone: configuration.devPhone, [
                    Page.paragraph("Your email is confirmed, but no code could be sent to your mobile. " + Self.sentence(error)),
                    Page.form("/open/verify", session, [Page.button("Send the text again")]),
                ]), status: (error as? TrifactorError)?.problem?.status ?? 503)
            }
            var next = opening
            next.enrollment = enrollment
            session.set(opening: next)
            return redirect("/open/phone")
        }
        route(&router, "GET", "/open/phone") { [self] request in
            guard let session = self.session(request).session, let opening = session.opening, let enrollment = opening.enrollment else { return redirect("/open") }
            return page(openCodePage(session, title: "Confirm your mobile", text: "We sent a code to \(enrollment.maskedPhone ?? "your mobile"): it protects every sign-in and transfer.",
                                     action: "/open/phone", error: nil))
        }
        route(&router, "POST", "/open/phone") { [self] request in
            let (session, form, _) = try posted(request)
            guard let opening = session.opening, let enrollment = opening.enrollment else { return redirect("/open") }
            do {
                _ = try blocking({ try await enrollment.confirm(code: form["code"] ?? "", name: "Mobile") })
            } catch let error as TrifactorError where error.problem?.code == .invalidCode {
                return page(openCodePage(session, title: "Confirm your mobile", text: "We sent a code to \(enrollment.maskedPhone ?? "your mobile").",
                                         action: "/open/phone", error: "That code is wrong. Check it and try again."), status: 400)
            }
            try createCustomer(opening)
            session.set(opening: nil)
            session.flash("Welcome to Trifactor Bank, \(opening.name). Your accounts are open.")
            // The mobile is confirmed: the browser is recognised as the new customer's, like after a second factor.
            return try finishSignIn(session, email: opening.email, request: request, next: "/accounts")
        }
    }

    /// A customer signed in with a password alone adds their mobile before anything else.
    func addSetup(_ router: inout Router) {
        route(&router, "GET", "/setup/phone") { [self] request in
            guard let session = session(request).session, case .signedIn(let customer, _) = session.stage else { return redirect("/") }
            let phone = try database.read { try $0.queryOne("SELECT phone FROM bank_customers WHERE id = $1", [.text(customer)])?.text("phone") }
            return page(Page.layout("Add two-step verification", session: session, devPhone: configuration.devPhone, notice: session.takeNotice(), [
                Page.paragraph(session.needsFactor ? "Your account has no second factor, so your balances stay hidden. Add your mobile: every sign-in and transfer will send it a code."
                               : "Add your mobile: sign-ins and transfers can then send it a code."),
                Page.form("/setup/phone", session, [
                    Page.field("Mobile number", name: "phone", type: "tel", value: phone, autocomplete: "tel"),
                    Page.button("Send me a code"),
                ]),
            ]))
        }
        route(&router, "POST", "/setup/phone") { [self] request in
            let (session, form, _) = try posted(request)
            guard case .signedIn = session.stage else { return redirect("/") }
            if !session.needsFactor { _ = try customer(request) }
            let client = trifactor(session, request)
            do {
                let enrollment = try blocking({ try await client.enrollPhone(form["phone"] ?? "", country: "GB") })
                session.set(phoneEnrollment: enrollment)
                return page(openCodePage(session, title: "Confirm your mobile", text: "We sent a code to \(enrollment.maskedPhone ?? "your mobile").",
                                         action: "/setup/phone/confirm", error: nil))
            } catch let error as TrifactorError where [.secondFactorRequired, .reauthenticationRequired].contains(error.problem?.code) {
                return stepUpOrFail(session, error, returnTo: "/setup/phone")
            } catch {
                session.flash(Self.sentence(error))
                return redirect("/setup/phone")
            }
        }
        route(&router, "POST", "/setup/phone/confirm") { [self] request in
            let (session, form, _) = try posted(request)
            guard case .signedIn = session.stage, let enrollment = session.phoneEnrollment else { return redirect("/") }
            do {
                _ = try blocking({ try await enrollment.confirm(code: form["code"] ?? "", name: "Mobile") })
            } catch let error as TrifactorError where error.problem?.code == .invalidCode {
                return page(openCodePage(session, title: "Confirm your mobile", text: "We sent a code to \(enrollment.maskedPhone ?? "your mobile").",
                                         action: "/setup/phone/confirm", error: "That code is wrong. Check it and try again."), status: 400)
            }
            session.set(phoneEnrollment: nil)
            let wasNeeded = session.needsFactor
            session.set(needsFactor: false)
            session.flash(wasNeeded ? "Two-step verification is on." : "Codes by text message are on.")
            return redirect(wasNeeded ? "/accounts" : "/settings")
        }
    }

    /// The customer and their two accounts, in one transaction (a second call for the same email changes nothing).
    func createCustomer(_ opening: BankSession.Opening) throws {
        try database.transaction { db in
            guard try db.queryOne("SELECT id FROM bank_customers WHERE email = $1", [.text(opening.email)]) == nil else { return }
            let id = UUID().uuidString.lowercased()
            try db.execute("""
                INSERT INTO bank_customers (id, email, name, phone, sitekey_picture, sitekey_phrase, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
                """, [.text(id), .text(opening.email), .text(opening.name), .text(opening.phone), .text(opening.sitekey.picture),
                      .text(opening.sitekey.phrase), .int(now().millis)])
            _ = try ledger.openAccounts(for: id, currency: "EUR", checking: Self.openingBalances.checking, saving: Self.openingBalances.saving, now: now(), on: db)
        }
    }

    static func fieldSentence(_ field: ServerProblem.InvalidField) -> String {
        let reason = field.reason.prefix(1).uppercased() + field.reason.dropFirst()
        return reason.hasSuffix(".") ? reason : reason + "."
    }

    func openPage(_ session: any Viewer, form: Form?, errors: [String: String]) -> HTML {
        let pictures: [HTML] = Sitekey.pictures.map { picture in
            .element("label", [:], [
                .element("img", ["src": "/sitekeys/\(picture).svg", "alt": ""]),
                .element("input", ["type": "radio", "name": "picture", "value": picture, "checked": form?["picture"] == picture ? "" : nil, "required": ""]),
                .text(" \(picture)"),
            ])
        }
        var fieldset: [HTML] = [.element("legend", [:], ["Your sitekey picture"])] + pictures
        if let error = errors["picture"] { fieldset.append(.element("p", ["class": "error", "role": "alert"], [.text(error)])) }
        return Page.layout("Open an account", session: session, devPhone: configuration.devPhone, [
            Page.form("/open", session, [
                Page.field("Full name", name: "name", value: form?["name"], error: errors["name"], autocomplete: "name"),
                Page.field("Email", name: "email", type: "email", value: form?["email"], error: errors["email"], autocomplete: "email"),
                Page.field("Password", name: "password", type: "password", error: errors["password"], autocomplete: "new-password"),
                Page.field("Mobile number", name: "phone", type: "tel", value: form?["phone"], error: errors["phone"], autocomplete: "tel"),
                .element("fieldset", ["class": "pictures"], fieldset),
                Page.paragraph("Your sitekey is shown before you type your password, so you know the site is ours."),
                Page.field("Sitekey phrase", name: "phrase", value: form?["phrase"], error: errors["phrase"]),
                Page.button("Open my account"),
            ]),
        ])
    }

    func openCodePage(_ session: BankSession, title: String, text: String, action: String, error: String?) -> HTML {
        Page.layout(title, session: session, devPhone: configuration.devPhone, [
            Page.paragraph(text),
            Page.form(action, session, [
                Page.field("Code", name: "code", error: error, autocomplete: "one-time-code", inputmode: "numeric", autofocus: true),
                Page.button("Confirm"),
            ]),
        ])
    }
}
