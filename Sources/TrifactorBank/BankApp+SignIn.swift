import Foundation
import HTTP
import Store
import TrifactorKit

/// Signing in: email, then the customer's sitekey with the password, then
/// the second factor they prefer (the others one click away).
extension BankApp {
    func addSignIn(_ router: inout Router) {
        route(&router, "GET", "/") { [self] request in
            var (cookie, session) = self.session(request)
            var cookies: [String] = []
            if case .signedIn? = session?.stage { return redirect("/accounts") }
            if session == nil {
                let issued = sessions.issue(replacing: cookie, secure: configuration.secure, now: now())
                (cookie, session) = (issued.0.value, issued.1)
                cookies.append(issued.0.setCookie)
            }
            guard let session else { return refused(500, "No session.") }
            session.set(stage: .start)
            let notice = session.takeNotice() ?? (request.query["signed_out"] == "1" ? "You are signed out." : nil)
            return page(emailPage(session, notice: notice), cookies: cookies)
        }
        route(&router, "POST", "/signin") { [self] request in
            let (session, form, _) = try posted(request)
            let email = (form["email"] ?? "").lowercased()
            guard email.count <= 254, email.split(separator: "@").count == 2, !email.contains(" ") else {
                return page(emailPage(session, email: form["email"], error: "Enter your email address, like ann@example.com."), status: 422)
            }
            if form["mode"] == "device" {
                // Passwordless: a push to the customer's device; every address gets the same page.
                let client = trifactor(session, request)
                do {
                    session.set(passwordless: try blocking({ try await client.signInWithPush(email: email) }))
                } catch {
                    return page(emailPage(session, email: email, error: Self.sentence(error)), status: (error as? TrifactorError)?.problem?.status ?? 503)
                }
                session.set(stage: .secondFactor(email: email))
                return redirect("/signin/device")
            }
            session.set(stage: .password(email: email))
            return page(passwordPage(session, email: email))
        }
        route(&router, "POST", "/signin/password") { [self] request in
            let (session, form, cookie) = try posted(request)
            guard case .password(let email) = session.stage else { return redirect("/") }
            let client = trifactor(session, request)
            let password = form.raw("password") ?? ""
            do {
                switch try blocking({ try await client.signIn(email: email, password: password) }) {
                case .signedIn:
                    // A password alone: no balance until the customer adds a second factor.
                    session.set(needsFactor: true)
                    return try finishSignIn(session, email: email, cookie: cookie, next: "/setup/phone")
                case .secondFactorRequired(let resolver):
                    session.set(resolver: resolver)
                    session.set(stage: .secondFactor(email: email))
                    return redirect("/signin/factor")
                }
            } catch {
                let status = (error as? TrifactorError)?.problem?.status ?? 500
                return page(passwordPage(session, email: email, error: Self.sentence(error)), status: status == 401 ? 401 : status)
            }
        }
        route(&router, "GET", "/signin/factor") { [self] request in
            guard let session = self.session(request).session, case .secondFactor = session.stage, let resolver = session.resolver else { return redirect("/") }
            return page(factorPage(session, resolver, notice: session.takeNotice()))
        }
        route(&router, "POST", "/signin/challenge") { [self] request in
            let (session, form, _) = try posted(request)
            guard case .secondFactor = session.stage, let resolver = session.resolver,
                  let hint = resolver.hints.first(where: { $0.id == form["factor"] }) else { return redirect("/") }
            do {
                switch try blocking({ try await resolver.challenge(hint) }) {
                case .push(let push):
                    session.set(push: (push, hint))
                    return redirect("/signin/push")
                case .codeSent, .enterCode:
                    session.set(codeHint: hint)
                    return redirect("/signin/code")
                case .passkey, .deviceChallenge:
                    session.flash("That way of confirming needs the Trifactor app; pick another.")
                    return redirect("/signin/factor")
                }
            } catch {
                return restart(session, error)
            }
        }
        route(&router, "GET", "/signin/code") { [self] request in
            guard let session = self.session(request).session, case .secondFactor = session.stage, let hint = session.codeHint else { return redirect("/") }
            return page(codePage(session, hint, error: nil))
        }
        route(&router, "POST", "/signin/code") { [self] request in
            let (session, form, cookie) = try posted(request)
            guard case .secondFactor(let email) = session.stage, let resolver = session.resolver, let hint = session.codeHint else { return redirect("/") }
            let code = form["code"] ?? ""
            do {
                _ = try blocking({ try await resolver.resolve(hint, with: .code(code)) })
                return try finishSignIn(session, email: email, cookie: cookie, next: "/accounts")
            } catch let error as TrifactorError where error.problem?.code == .invalidCode {
                return page(codePage(session, hint, error: Self.wrongCode(error)), status: 400)
            } catch {
                return restart(session, error)
            }
        }
        route(&router, "POST", "/signin/call") { [self] request in
            let (session, _, _) = try posted(request)
            guard case .secondFactor = session.stage, let resolver = session.resolver, let hint = session.codeHint else { return redirect("/") }
            do {
                try blocking({ try await resolver.callInstead(hint) })
            } catch {
                return restart(session, error)
            }
            guard case .phone(let masked) = hint.kind else { return redirect("/signin/code") }
            return page(codePage(session, hint, error: nil, notice: "We are calling \(masked) now: the voice reads out the same code."))
        }
        route(&router, "GET", "/signin/push") { [self] request in
            guard let session = self.session(request).session, case .secondFactor(let email) = session.stage, let resolver = session.resolver,
                  let (push, hint) = session.push else { return redirect("/") }
            do {
                switch try blocking({ try await push.state() }) {
                case .pending:
                    return page(approvalPage(session, number: push.number))
                case .approved:
                    _ = try blocking({ try await resolver.resolve(hint, with: .approval(push)) })
                    return try finishSignIn(session, email: email, cookie: self.session(request).cookie, next: "/accounts")
                case .denied:
                    return restart(session, TrifactorError.approvalDenied)
                case .expired:
                    return restart(session, TrifactorError.expired)
                }
            } catch {
                return restart(session, error)
            }
        }
        route(&router, "GET", "/signin/device") { [self] request in
            guard let session = self.session(request).session, case .secondFactor(let email) = session.stage, let push = session.passwordless else {
                return redirect("/")
            }
            do {
                switch try blocking({ try await push.approval.state() }) {
                case .pending:
                    return page(approvalPage(session, number: push.number))
                case .approved:
                    _ = try blocking({ try await push.complete() })
                    session.set(passwordless: nil)
                    return try finishSignIn(session, email: email, cookie: self.session(request).cookie, next: "/accounts")
                case .denied: return restart(session, TrifactorError.approvalDenied)
                case .expired: return restart(session, TrifactorError.expired)
                }
            } catch {
                return restart(session, error)
            }
        }
        route(&router, "POST", "/signin/cancel") { [self] request in
            let (session, _, _) = try posted(request)
            return restart(session, nil)
        }
        route(&router, "POST", "/signout") { [self] request in
            let (session, _, cookie) = try posted(request)
            let client = trifactor(session, request)
            try? blocking({ try await client.signOut() })
            sessions.end(cookie)
            return redirect("/?signed_out=1", cookies: [SessionCookie.cleared(secure: configuration.secure)])
        }
    }

    /// Back to the first page with a message; the pending sign-in is dropped.
    func restart(_ session: BankSession, _ error: (any Error)?) -> Response {
        session.set(passwordless: nil)
        session.set(resolver: nil)
        session.set(push: nil)
        session.set(codeHint: nil)
        session.set(stage: .start)
        if let error {
            let text: String
            switch (error as? TrifactorError) {
            case .approvalDenied?: text = "The sign-in was denied on your device. If that was not you, change your password."
            case .expired?: text = "The sign-in took too long. Please start again."
            case .server(let p)? where p.code == .tooManyAttempts: text = "Too many wrong codes, so the sign-in was cancelled. \(Self.sentence(error))"
            case .server(let p)? where p.code == .invalidPendingCredential: text = "The sign-in took too long. Please start again."
            default: text = Self.sentence(error)
            }
            session.flash(text)
        } else {
            session.flash("Sign-in cancelled.")
        }
        return redirect("/")
    }

    /// Signed in: a new cookie (the old one dies), the customer found by email.
    func finishSignIn(_ session: BankSession, email: String, cookie: String?, next: String) throws -> Response {
        guard let customer = try database.read({ try $0.queryOne("SELECT id FROM bank_customers WHERE email = $1", [.text(email)])?.text("id") }) else {
            return restart(session, TrifactorError.invalidArgument("There is no bank customer with this email. Open an account first."))
        }
        session.set(resolver: nil)
        session.set(push: nil)
        session.set(codeHint: nil)
        session.set(stage: .signedIn(customerID: customer, email: email))
        session.confirm(now())
        let (fresh, _) = sessions.issue(replacing: cookie, carrying: session, secure: configuration.secure, now: now())
        return redirect(next, cookies: [fresh.setCookie])
    }

    // MARK: Pages

    func emailPage(_ session: BankSession, email: String? = nil, error: String? = nil, notice: String? = nil) -> HTML {
        Page.layout("Sign in", session: session, devPhone: configuration.devPhone, notice: notice, passkeys: true, [
            Page.form("/signin", session, [
                Page.field("Email", name: "email", type: "email", value: email, error: error, autocomplete: "username", autofocus: true),
                Page.button("Continue", name: "mode", value: "password"),
                Page.button("Sign in with my device, no password", name: "mode", value: "device", kind: "secondary"),
            ]),
            Page.passkeyButton("Sign in with a passkey", flow: "passwordless"),
            Page.paragraph("New here?"), Page.link("Open an account", "/open"),
        ])
    }

    func passwordPage(_ session: BankSession, email: String, error: String? = nil) -> HTML {
        let sitekey = (try? database.read { db in
            try db.queryOne("SELECT sitekey_picture, sitekey_phrase FROM bank_customers WHERE email = $1", [.text(email)]).map {
                Sitekey(unchecked: try $0.text("sitekey_picture"), phrase: try $0.text("sitekey_phrase"))
            }
        }) ?? nil
        let shown = sitekey ?? Sitekey.decoy(for: email, secret: configuration.sitekeySecret)
        return Page.layout("Welcome back", session: session, devPhone: configuration.devPhone, [
            .element("div", ["class": "card sitekey"], [
                .element("img", ["src": "/sitekeys/\(shown.picture).svg", "alt": "Your picture: \(shown.picture)"]),
                .element("div", [:], [Page.paragraph("Your picture and phrase:"), .element("p", ["class": "phrase"], [.element("strong", [:], [.text(shown.phrase)])])]),
            ]),
            Page.paragraph("If this is not the picture and phrase you chose, do not enter your password."),
            Page.form("/signin/password", session, [
                .element("input", ["type": "hidden", "name": "username", "value": email, "autocomplete": "username"]),
                Page.field("Password", name: "password", type: "password", error: error, autocomplete: "current-password", autofocus: true),
                Page.button("Sign in"),
            ]),
            Page.link("Not you? Start again", "/"),
        ])
    }

    /// The number to pick on the device, large; the page refreshes until the device answers.
    func approvalPage(_ session: BankSession, number: Int) -> HTML {
        Page.layout("Approve on your device", session: session, devPhone: configuration.devPhone, refresh: 2, [
            Page.paragraph("Open trifactor on your device and pick this number:"),
            .element("p", ["class": "number", "aria-live": "polite"], [.text(String(number))]),
            Page.paragraph("This page moves on by itself once you approve."),
            Page.form("/signin/cancel", session, [Page.button("Cancel", kind: "secondary")]),
        ])
    }

    func factorPage(_ session: BankSession, _ resolver: SecondFactorResolver, notice: String?) -> HTML {
        let options: [HTML] = resolver.hints.compactMap { hint in
            let label: String
            switch hint.kind {
            case .phone(let masked): label = "Text me a code at \(masked)"
            case .totp: label = "Use my authenticator app"
            case .device: label = "Approve on my device\(hint.displayName.map { " (\($0))" } ?? "")"
            case .recoveryCode: label = "Use a recovery code"
            case .passkey: return nil
            case .other: return nil
            }
            return Page.button(label, name: "factor", value: hint.id, kind: hint.id == resolver.hints.first?.id ? "primary" : "secondary")
        }
        let passkeys: [HTML] = resolver.hints.filter { $0.kind == .passkey }.map { hint in
            Page.passkeyButton("Use Touch ID / Face ID / your security key", flow: "second-factor", factor: hint.id,
                               kind: hint.id == resolver.hints.first?.id ? "primary" : "secondary")
        }
        return Page.layout("Confirm it's you", session: session, devPhone: configuration.devPhone, notice: notice, passkeys: !passkeys.isEmpty, [
            Page.paragraph("Choose how to confirm:"),
        ] + passkeys + [
            Page.form("/signin/challenge", session, options),
            Page.form("/signin/cancel", session, [Page.button("Cancel", kind: "link")]),
        ])
    }

    func codePage(_ session: BankSession, _ hint: FactorHint, error: String?, notice: String? = nil) -> HTML {
        let (title, hintText): (String, String)
        switch hint.kind {
        case .phone(let masked): (title, hintText) = ("Enter the code we sent", "We sent a 6-digit code to \(masked). If the text does not arrive, we call you and read it out.")
        case .recoveryCode: (title, hintText) = ("Enter a recovery code", "Each recovery code works once.")
        default: (title, hintText) = ("Enter the code from your app", "Open your authenticator app and type the 6-digit code for Trifactor Bank.")
        }
        var call: [HTML] = []
        if case .phone = hint.kind { call = [Page.form("/signin/call", session, [Page.button("Call me instead", kind: "secondary")])] }
        return Page.layout(title, session: session, devPhone: configuration.devPhone, notice: notice, [
            Page.paragraph(hintText),
            Page.form("/signin/code", session, [
                Page.field(hint.kind == .recoveryCode ? "Recovery code" : "Code", name: "code", value: nil, error: error, autocomplete: "one-time-code",
                           inputmode: hint.kind == .recoveryCode ? nil : "numeric", autofocus: true),
                Page.button("Confirm"),
            ]),
        ] + call + [
            Page.link("Use another way", "/signin/factor"),
            Page.form("/signin/cancel", session, [Page.button("Cancel", kind: "link")]),
        ])
    }
}

