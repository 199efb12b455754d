import Foundation
import HTTP
import Store
import TrifactorKit

/// Signing in: email, then the customer's sitekey with the password, then
/// the second factor they prefer (the others one click away).
extension BankApp {
    func addSignIn(_ router: inout Router) {
        route(&router, "GET", "/") { [self] request in
            let (viewer, cookies) = self.viewer(request)
            if viewer.isSignedIn { return redirect("/accounts") }
            var notice = request.query["signed_out"] == "1" ? "You are signed out." : request.query["ended"] == "1" ? Self.signedOutElsewhereNotice : nil
            if let session = viewer as? BankSession {
                session.set(stage: .start)
                notice = session.takeNotice() ?? notice
            }
            return page(emailPage(viewer, notice: notice), cookies: cookies)
        }
        route(&router, "POST", "/signin") { [self] request in
            if let limited = signInLimited(request) { return limited }
            let (viewer, form) = try postedBeforeSession(request)
            let email = (form["email"] ?? "").lowercased()
            guard email.count <= 254, email.split(separator: "@").count == 2, !email.contains(" ") else {
                return page(emailPage(viewer, email: form["email"], error: "Enter your email address, like ann@example.com."), status: 422)
            }
            let (session, cookies) = startSession(viewer)
            if form["mode"] == "device" {
                // Passwordless: a push to the customer's device; every address gets the same page.
                let client = trifactor(session, request)
                do {
                    session.set(passwordless: try blocking({ try await client.signInWithPush(email: email) }))
                } catch {
                    return page(emailPage(session, email: email, error: Self.sentence(error)), status: (error as? TrifactorError)?.problem?.status ?? 503,
                                cookies: cookies)
                }
                session.set(stage: .secondFactor(email: email))
                return redirect("/signin/device", cookies: cookies)
            }
            session.set(stage: .password(email: email))
            return page(passwordPage(session, email: email, request: request), cookies: cookies)
        }
        route(&router, "POST", "/signin/password") { [self] request in
            let (session, form, _) = try posted(request)
            guard case .password(let email) = session.stage else { return redirect("/") }
            let client = trifactor(session, request)
            let password = form.raw("password") ?? ""
            do {
                switch try blocking({ try await client.signIn(email: email, password: password) }) {
                case .signedIn:
                    // A password alone: no balance until the customer adds a second factor.
                    session.set(needsFactor: true)
                    return try finishSignIn(session, email: email, request: request, next: "/setup/phone", secondFactor: false)
                case .secondFactorRequired(let resolver):
                    session.set(resolver: resolver)
                    session.set(stage: .secondFactor(email: email))
                    return redirect("/signin/factor")
                }
            } catch {
                let status = (error as? TrifactorError)?.problem?.status ?? 500
                return page(passwordPage(session, email: email, request: request, error: Self.sentence(error)), status: status == 401 ? 401 : status)
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
            let (session, form, _) = try posted(request)
            guard case .secondFactor(let email) = session.stage, let resolver = session.resolver, let hint = session.codeHint else { return redirect("/") }
            let code = form["code"] ?? ""
            do {
                _ = try blocking({ try await resolver.resolve(hint, with: .code(code)) })
                return try finishSignIn(session, email: email, request: request, next: "/accounts")
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
                    return try finishSignIn(session, email: email, request: request, next: "/accounts")
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
                    return try finishSignIn(session, email: email, request: request, next: "/accounts")
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

    /// Signed in: a new cookie (the old one dies), the customer found by email. After a second factor (`secondFactor`:
    /// not a password alone) the browser is recognised as the customer's, so its sign-in page shows their sitekey.
    func finishSignIn(_ session: BankSession, email: String, request: Request, next: String, secondFactor: Bool = true) throws -> Response {
        guard let customer = try database.read({ try $0.queryOne("SELECT id FROM bank_customers WHERE email = $1", [.text(email)])?.text("id") }) else {
            return restart(session, TrifactorError.invalidArgument("There is no bank customer with this email. Open an account first."))
        }
        session.set(resolver: nil)
        session.set(push: nil)
        session.set(codeHint: nil)
        session.set(stage: .signedIn(customerID: customer, email: email))
        session.confirm(now())
        session.trifactorChecked(now())
        let (fresh, _) = sessions.issue(replacing: SessionCookie.value(in: request.header("cookie")), carrying: session, secure: configuration.secure, now: now())
        var cookies = [fresh.setCookie]
        if secondFactor { cookies += rememberBrowser(customer, request) }
        return redirect(next, cookies: cookies)
    }
}
