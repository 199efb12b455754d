import Foundation
import HTTP
import Store
import TrifactorKit
import WebUI

/// Signing in: email, then the customer's sitekey with the password, then
/// the second factor they prefer (the others one click away). Each form
/// posts and redirects to the next step's page, which renders the session.
extension BankApp {
    /// The routes of signing in, its second step, and signing out: each HTTP method and path, and the handler that answers it.
    func addSignIn(_ router: inout Router) {
        route(&router, "GET", "/", showStart)
        route(&router, "POST", "/signin", submitEmail)
        route(&router, "GET", "/signin/password", showPassword)
        route(&router, "POST", "/signin/password", checkPassword)
        route(&router, "GET", "/signin/factor", showFactorChoice)
        route(&router, "POST", "/signin/challenge", challengeFactor)
        route(&router, "GET", "/signin/code", showSignInCode)
        route(&router, "POST", "/signin/code", checkSignInCode)
        route(&router, "POST", "/signin/resend", resendSignInCode)
        route(&router, "POST", "/signin/call", callForSignIn)
        route(&router, "GET", "/signin/push", showSignInApproval)
        route(&router, "GET", "/signin/device", showDeviceSignIn)
        route(&router, "POST", "/signin/cancel", cancelSignIn)
        route(&router, "POST", "/signout", signOutHere)
    }

    /// `GET /`: the start page, the email form (a sign-in or reset under way is dropped).
    func showStart(_ request: Request) -> Response {
        let (viewer, issued) = self.viewer(request)
        if viewer.isSignedIn { return redirect("/accounts") }
        var notice =
            request.query["signed_out"] == "1"
            ? "You are signed out." : request.query["ended"] == "1" ? Self.signedOutElsewhereNotice : nil
        var cookies = issued
        if notice == nil, !(viewer is BankSession), SessionCookie.value(in: request.header("cookie")) != nil {
            // A session cookie the bank no longer knows: signed out at Trifactor, idle too long, or the bank restarted.
            // Said once: the dead cookie goes.
            notice = "Your session has ended. Please sign in again."
            cookies.append(SessionCookie.cleared(secure: configuration.secure))
        }
        if notice == nil, request.query["continue"] == "1" { notice = "Please sign in to see that page." }
        var email: String?
        if let session = viewer as? BankSession {
            // The start page starts again: a sign-in or a reset under way is dropped (its email stays in the field).
            if case .password(let typed) = session.stage { email = typed }
            session.dropSignIn()
            if session.flows({ flows in
                defer { flows.reset = nil }
                return flows.reset != nil
            }) {
                notice =
                    "You left the password reset, so your password is unchanged. To start it again, enter your email, then choose \"Forgot your password?\"."
            }
            session.set(stage: .start)
            notice = session.takeNotice() ?? notice
        }
        let draft = self.draft(for: "/", viewer, request)
        return page(
            emailPage(
                viewer, request, email: draft?["email"] ?? email, error: draft?.errors["email"],
                notice: draft?.errors["notice"] ?? notice),
            cookies: cookies)
    }

    /// `POST /signin`: the email, then the password page (or a push to the device, passwordless).
    func submitEmail(_ request: Request) throws -> Response {
        if let limited = signInLimited(request) { return limited }
        let (viewer, form) = try postedBeforeSession(request)
        let email = (form["email"] ?? "").lowercased()
        guard Self.looksLikeEmail(email) else {
            return back(
                to: "/", viewer,
                FormDraft(
                    values: ["email": form["email"] ?? ""],
                    errors: ["email": "Enter your email address, like ann@example.com."]))
        }
        let (session, cookies) = startSession(viewer)
        session.dropSignIn()
        session.flows { $0.reset = nil }
        if form["mode"] == "device" {
            // Passwordless: a push to the customer's device; every address gets the same page.
            let client = trifactor(session, request)
            do {
                session.set(passwordless: try blocking({ try await client.signInWithPush(email: email) }))
            } catch {
                return back(
                    to: "/", session, FormDraft(values: ["email": email], errors: ["email": Self.sentence(error)]),
                    cookies: cookies)
            }
            session.set(stage: .secondFactor(email: email))
            return redirect("/signin/device", cookies: cookies)
        }
        session.set(stage: .password(email: email))
        return redirect("/signin/password", cookies: cookies)
    }

    /// `GET /signin/password`: the password page, with the customer's sitekey on a known browser.
    func showPassword(_ request: Request) -> Response {
        let session = self.session(request).session
        guard let session, case .password(let email) = session.stage else { return outOfStep(session, request) }
        let draft = session.draft(for: "/signin/password", now: now())
        return page(
            passwordPage(session, request, email: email, error: draft?.errors["password"], notice: session.takeNotice())
        )
    }

    /// `POST /signin/password`: the password, then the second factor (or adding one).
    func checkPassword(_ request: Request) throws -> Response {
        let (session, form, _) = try posted(request)
        guard case .password(let email) = session.stage else { return outOfStep(session, request) }
        let client = trifactor(session, request)
        let password = form.raw("password") ?? ""
        do {
            switch try blocking({ try await client.signIn(email: email, password: password) }) {
            case .signedIn:
                // A password alone: no balance until the customer adds a second factor.
                session.set(needsFactor: true)
                return try finishSignIn(
                    session, email: email, request: request, next: "/setup/phone", secondFactor: false)
            case .secondFactorRequired(let resolver):
                session.set(resolver: resolver)
                session.set(stage: .secondFactor(email: email))
                return redirect("/signin/factor")
            }
        } catch {
            return back(to: "/signin/password", session, FormDraft(errors: ["password": Self.sentence(error)]))
        }
    }

    /// `GET /signin/factor`: the customer's second factors, the preferred first.
    func showFactorChoice(_ request: Request) -> Response {
        let session = self.session(request).session
        guard let session, case .secondFactor = session.stage, let resolver = session.resolver,
            session.passwordless == nil
        else {
            return outOfStep(session, request)
        }
        // "Use another way": the code or push under way is left.
        session.set(code: nil)
        session.set(push: nil)
        return page(factorPage(session, request, resolver, notice: session.takeNotice()))
    }

    /// `POST /signin/challenge`: sends the chosen factor's challenge, then its page.
    func challengeFactor(_ request: Request) throws -> Response {
        let (session, form, _) = try posted(request)
        guard case .secondFactor = session.stage, let resolver = session.resolver,
            let hint = resolver.hints.first(where: { $0.id == form["factor"] })
        else { return outOfStep(session, request) }
        do {
            switch try blocking({ try await resolver.challenge(hint) }) {
            case .push(let push):
                session.set(push: (push, hint))
                return redirect("/signin/push")
            case .codeSent, .enterCode:
                session.set(code: CodeChallenge(hint))
                return redirect("/signin/code")
            case .passkey, .deviceChallenge:
                session.flash("That way of confirming needs the Trifactor app; pick another.")
                return redirect("/signin/factor")
            }
        } catch {
            return challengeRefused(session, error, hint: hint, resolver: resolver)
        }
    }

    /// A challenge Trifactor refused: a text that cannot be sent yet offers the other ways on the choice page; a sign-in
    /// that ended starts again.
    func challengeRefused(_ session: BankSession, _ error: any Error, hint: FactorHint, resolver: SecondFactorResolver)
        -> Response
    {
        if Self.isSendLimit(error) {
            session.flash(Self.cannotText(error, others: resolver.hints.filter { $0.id != hint.id }))
            session.set(code: nil)
            return redirect("/signin/factor")
        }
        return restart(session, error)
    }

    /// Back to the first page with a message; the pending sign-in is dropped.
    func restart(_ session: BankSession, _ error: (any Error)?, saying text: String? = nil) -> Response {
        session.dropSignIn()
        session.set(stage: .start)
        if let text {
            session.flash(text)
        } else if let error {
            let failure = error as? TrifactorError
            switch (failure?.code, failure?.problem) {
            case (.approvalDenied?, _):
                session.flash("The sign-in was denied on your device. If that was not you, change your password.")
            case (.expired?, _): session.flash("The sign-in took too long. Please start again.")
            case (_, let p?) where p.code == .attemptsExhausted:
                session.flash("Too many wrong codes, so the sign-in was cancelled. Sign in again to get a new code.")
            case (_, let p?) where p.code == .tooManyAttempts:
                session.flash("Too many wrong codes, so the sign-in was cancelled. \(Self.tryAgain(p.retryAfter))")
            case (_, let p?) where p.code == .invalidPendingCredential:
                session.flash("The sign-in took too long. Please start again.")
            default: session.flash(Self.sentence(error))
            }
        } else {
            session.flash("Sign-in cancelled.")
        }
        return redirect("/")
    }

    /// Signed in: a new cookie (the old one dies), the customer found by email. After a second factor (`secondFactor`:
    /// not a password alone) the browser is recognised as the customer's, so its sign-in page shows their sitekey. An
    /// email Trifactor knows and the bank does not is an opening left before its email was confirmed: the customer
    /// goes to the opening form, which carries on from there.
    func finishSignIn(_ session: BankSession, email: String, request: Request, next: String, secondFactor: Bool = true)
        throws -> Response
    {
        guard
            let customer = try database.read({
                try $0.queryOne("SELECT id FROM bank_customers WHERE email = $1", [.text(email)])?.text("id")
            })
        else {
            let client = trifactor(session, request)
            try? blocking({ try await client.signOut() })
            session.set(needsFactor: false)
            session.keep(FormDraft(values: ["email": email]), for: "/open", now: now())
            return restartOpening(
                session,
                saying:
                    "You started opening an account with this email but did not finish. Fill in the form again with "
                    + "the same email and password: we carry on from where you left off.")
        }
        session.dropSignIn()
        session.set(stage: .signedIn(customerID: customer, email: email))
        session.confirm(now())
        session.trifactorChecked(now())
        let (fresh, _) = sessions.issue(
            replacing: SessionCookie.value(in: request.header("cookie")), carrying: session,
            secure: configuration.secure, now: now())
        var cookies = [fresh.setCookie]
        if secondFactor { cookies += rememberBrowser(customer, request, client: trifactor(session, request)) }
        return redirect(next, cookies: cookies)
    }
}
