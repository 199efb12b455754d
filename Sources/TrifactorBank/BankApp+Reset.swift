import Foundation
import HTTP
import TrifactorKit

/// "Forgot your password?": the email, the 8-digit code Trifactor emails
/// (the same page for every address, so it tells no one who banks here),
/// then one of the customer's second factors (a reset is never a way around
/// them), then the new password, checked like any other. Every session of
/// the customer ends and they sign in with the new password. A code is
/// typed on the same page as the new password; a device's approval and a
/// passkey come after it. Every step is a page (Back and refresh are safe),
/// every refusal says what to do next, and "Start again" leaves the password
/// unchanged.
extension BankApp {
    /// What the sign-in page says once the password is changed.
    static let passwordReset = "Your password is changed, and you are signed out everywhere. Sign in with your new password."

    func addReset(_ router: inout Router) {
        route(&router, "GET", "/forgot") { [self] request in
            let (viewer, cookies) = self.viewer(request)
            if viewer.isSignedIn { return redirect("/settings#password") }
            var email: String?
            if let session = viewer as? BankSession {
                if let flow = session.flows({ $0.reset }) { return redirect(resetStep(flow)) }
                if case .password(let typed) = session.stage { email = typed }
            }
            let draft = self.draft(for: "/forgot", viewer, request)
            return page(forgotPage(viewer, request, email: draft?["email"] ?? email, error: draft?.errors["email"],
                                   notice: draft?.errors["notice"] ?? (viewer as? BankSession)?.takeNotice()), cookies: cookies)
        }
        route(&router, "POST", "/forgot") { [self] request in
            if let limited = signInLimited(request) { return limited }
            let (viewer, form) = try postedBeforeSession(request)
            if viewer.isSignedIn { return redirect("/settings#password") }
            let email = (form["email"] ?? "").lowercased()
            guard email.count <= 254, email.split(separator: "@").count == 2, !email.contains(" ") else {
                return back(to: "/forgot", viewer, FormDraft(values: ["email": form["email"] ?? ""], errors: ["email": "Enter your email address, like ann@example.com."]))
            }
            let (session, cookies) = startSession(viewer)
            session.dropSignIn()
            session.set(stage: .start)
            let client = trifactor(session, request)
            do {
                try blocking({ try await client.requestPasswordReset(email: email) })
            } catch {
                let sentence = (error as? TrifactorError)?.problem?.invalidFields.first.map(Self.fieldSentence) ?? Self.sentence(error)
                return back(to: "/forgot", session, FormDraft(values: ["email": email], errors: ["email": sentence]), cookies: cookies)
            }
            session.flows { $0.opening = nil; $0.reset = ResetFlow(email: email, emailWindow: now()) }
            return redirect("/forgot/code", cookies: cookies)
        }
        route(&router, "GET", "/forgot/code") { [self] request in
            let session = self.session(request).session
            guard let session, let flow = session.flows({ $0.reset }), flow.reset == nil else { return outOfStep(session, request) }
            let draft = session.draft(for: "/forgot/code", now: now())
            return page(resetCodePage(session, request, flow, error: draft?.errors["code"], notice: session.takeNotice()))
        }
        route(&router, "POST", "/forgot/code") { [self] request in
            let (session, form, _) = try posted(request)
            guard var flow = session.flows({ $0.reset }), flow.reset == nil else { return outOfStep(session, request) }
            let client = trifactor(session, request), email = flow.email, typed = form["code"] ?? ""
            do {
                flow.reset = try blocking({ try await client.verifyPasswordReset(email: email, code: typed) })
            } catch let error as TrifactorError where error.problem?.code == .invalidCode {
                // Wrong, used, expired, or no such account: Trifactor answers the same, and counts five per ten minutes.
                flow.emailTries += 1
                session.flows { $0.reset = flow }
                let left = Self.emailCodeTries - flow.emailTries
                return back(to: "/forgot/code", session, FormDraft(errors: ["code": left > 0
                    ? "That code is wrong. \(left) more \(left == 1 ? "try" : "tries")." : Self.emailLocked(window: flow.emailWindow, now: now())]))
            } catch let error as TrifactorError where error.problem?.invalidFields.isEmpty == false {
                return back(to: "/forgot/code", session, FormDraft(errors: ["code": "Enter the 8-digit code from the email."]))
            } catch {
                return back(to: "/forgot/code", session, FormDraft(errors: ["code": Self.sentence(error)]))
            }
            session.flows { $0.reset = flow }
            return redirect(resetStep(flow))
        }
        route(&router, "POST", "/forgot/resend") { [self] request in
            let (session, _, _) = try posted(request)
            guard var flow = session.flows({ $0.reset }), flow.reset == nil else { return outOfStep(session, request) }
            if now() >= flow.emailWindow.addingTimeInterval(Self.emailCodeWindow) {
                flow.emailTries = 0
                flow.emailWindow = now()
            } else if flow.emailTries >= Self.emailCodeTries {
                session.flash(Self.emailLocked(window: flow.emailWindow, now: now()))
                return redirect("/forgot/code")
            }
            let client = trifactor(session, request), email = flow.email
            do {
                try blocking({ try await client.requestPasswordReset(email: email) })
                session.flows { $0.reset = flow }
                session.flash("If there is an account with \(email), we sent it a new code. It can take a minute to arrive; the old one no longer works.")
            } catch {
                session.flash(Self.sentence(error))
            }
            return redirect("/forgot/code")
        }
        route(&router, "POST", "/forgot/cancel") { [self] request in
            let (session, _, _) = try posted(request)
            if session.isSignedIn { return redirect("/accounts") }
            session.flows { $0.reset = nil }
            session.flash("Nothing was changed: your password is the same as before.")
            return redirect("/")
        }
        route(&router, "GET", "/forgot/factor") { [self] request in
            let session = self.session(request).session
            guard let session, var flow = session.flows({ $0.reset }), let reset = flow.reset, reset.secondFactorRequired, flow.push == nil else {
                return outOfStep(session, request)
            }
            // "Use another way": the factor chosen before is left (a password typed for it is forgotten).
            flow.factor = nil
            flow.newPassword = nil
            session.flows { $0.reset = flow }
            return page(resetFactorPage(session, request, reset, notice: session.takeNotice()))
        }
        route(&router, "POST", "/forgot/challenge") { [self] request in
            let (session, form, _) = try posted(request)
            guard var flow = session.flows({ $0.reset }), let reset = flow.reset, flow.push == nil,
                  let hint = reset.hints.first(where: { $0.id == form["factor"] }) else { return outOfStep(session, request) }
            switch hint.kind {
            case .device, .passkey:
                // The new password first; the approval or the passkey then confirms it.
                break
            default:
                do {
                    _ = try blocking({ try await reset.challenge(hint) })
                } catch {
                    guard Self.isSendLimit(error) else { return endReset(session, error) }
                    session.flash(Self.cannotText(error, others: reset.hints.filter { $0.id != hint.id }))
                    return redirect("/forgot/factor")
                }
            }
            flow.factor = CodeChallenge(hint)
            session.flows { $0.reset = flow }
            return redirect("/forgot/new")
        }
        route(&router, "GET", "/forgot/new") { [self] request in
            let session = self.session(request).session
            guard let session, let flow = session.flows({ $0.reset }), resetStep(flow) == "/forgot/new" else { return outOfStep(session, request) }
            let draft = session.draft(for: "/forgot/new", now: now())
            return page(resetNewPage(session, request, flow, draft: draft, notice: session.takeNotice()))
        }
        route(&router, "POST", "/forgot/new") { [self] request in
            let (session, form, _) = try posted(request)
            guard var flow = session.flows({ $0.reset }), let reset = flow.reset, resetStep(flow) == "/forgot/new" else { return outOfStep(session, request) }
            let password = form.raw("new_password") ?? ""
            guard !password.isEmpty else { return back(to: "/forgot/new", session, FormDraft(errors: ["new_password": "Choose a new password."])) }
            guard let factor = flow.factor else {
                return resetAnswered(session) { try blocking({ try await reset.complete(newPassword: password) }) }
            }
            switch factor.hint.kind {
            case .device:
                flow.newPassword = password
                if flow.push == nil {
                    do {
                        guard case .push(let push) = try blocking({ try await reset.challenge(factor.hint) }) else { return endReset(session, nil) }
                        flow.push = push
                    } catch {
                        guard Self.isSendLimit(error) else { return endReset(session, error) }
                        session.flash(Self.sentence(error))
                        return redirect("/forgot/factor")
                    }
                }
                session.flows { $0.reset = flow }
                return redirect("/forgot/push")
            case .passkey:
                flow.newPassword = password
                session.flows { $0.reset = flow }
                return redirect("/forgot/passkey")
            default:
                let code = form["code"] ?? ""
                return resetAnswered(session, factor: factor, code: code) {
                    try blocking({ try await reset.complete(newPassword: password, proving: factor.hint, with: .code(code)) })
                }
            }
        }
        route(&router, "POST", "/forgot/text") { [self] request in
            let (session, _, _) = try posted(request)
            guard var flow = session.flows({ $0.reset }), let reset = flow.reset, let factor = flow.factor, factor.isTexted else {
                return outOfStep(session, request)
            }
            do {
                _ = try blocking({ try await reset.challenge(factor.hint) })
            } catch {
                guard Self.isSendLimit(error) else { return endReset(session, error) }
                session.flash(Self.cannotText(error, others: reset.hints.filter { $0.id != factor.hint.id }))
                return redirect("/forgot/new")
            }
            flow.factor = CodeChallenge(factor.hint)
            session.flows { $0.reset = flow }
            session.flash(Self.newCodeSent(factor.hint))
            return redirect("/forgot/new")
        }
        route(&router, "POST", "/forgot/call") { [self] request in
            let (session, _, _) = try posted(request)
            guard let flow = session.flows({ $0.reset }), let reset = flow.reset, let hint = flow.factor?.hint, case .phone(let masked) = hint.kind else {
                return outOfStep(session, request)
            }
            do {
                try blocking({ try await reset.callInstead(hint) })
            } catch {
                guard Self.isSendLimit(error) else { return endReset(session, error) }
                session.flash(Self.cannotText(error, others: reset.hints.filter { $0.id != hint.id }).replacingOccurrences(of: "send another text",
                                                                                                                            with: "call you"))
                return redirect("/forgot/new")
            }
            session.flash("We are calling \(masked) now: the voice reads out the same code.")
            return redirect("/forgot/new")
        }
        route(&router, "GET", "/forgot/push") { [self] request in
            let session = self.session(request).session
            guard let session, var flow = session.flows({ $0.reset }), let reset = flow.reset, let push = flow.push, let hint = flow.factor?.hint,
                  let password = flow.newPassword else { return outOfStep(session, request) }
            do {
                switch try blocking({ try await push.state() }) {
                case .pending:
                    return page(approvalPage(session, request, number: push.number, cancel: "/forgot/cancel"))
                case .approved:
                    // The approval stays good if the new password is refused: the customer types another, no new push.
                    flow.newPassword = nil
                    session.flows { $0.reset = flow }
                    return resetAnswered(session) {
                        try blocking({ try await reset.complete(newPassword: password, proving: hint, with: .approval(push)) })
                    }
                case .denied:
                    return endReset(session, TrifactorError.approvalDenied)
                case .expired:
                    return endReset(session, TrifactorError.expired)
                }
            } catch {
                return endReset(session, error)
            }
        }
        route(&router, "GET", "/forgot/passkey") { [self] request in
            let session = self.session(request).session
            guard let session, let flow = session.flows({ $0.reset }), resetStep(flow) == "/forgot/passkey" else { return outOfStep(session, request) }
            return page(resetPasskeyPage(session, request, notice: session.takeNotice()))
        }
        route(&router, "POST", "/forgot/passkey/options") { [self] request in
            let (session, _) = try postedJSON(request)
            guard let flow = session.flows({ $0.reset }), let reset = flow.reset, let hint = flow.factor?.hint, hint.kind == .passkey,
                  flow.newPassword != nil else { return jsonError(409, "This reset is over. Start again.") }
            do {
                guard case .passkey(let options) = try blocking({ try await reset.challenge(hint) }) else { return jsonError(409, "That is not a passkey.") }
                return Response.json(RequestBody(options: options))
            } catch {
                return jsonRefusal(error)
            }
        }
        route(&router, "POST", "/forgot/passkey") { [self] request in
            let (session, _) = try postedJSON(request)
            guard var flow = session.flows({ $0.reset }), let reset = flow.reset, let factor = flow.factor, factor.hint.kind == .passkey,
                  let password = flow.newPassword,
                  let body = try? WireJSON.sharedDecoder.decode(AssertionBody.self, from: Data(request.body)) else {
                return jsonError(409, "This reset is over. Start again.")
            }
            do {
                try blocking({ try await reset.complete(newPassword: password, proving: factor.hint, with: .assertion(body.assertion)) })
            } catch let error as TrifactorError where error.problem?.code == .invalidCode {
                return jsonError(400, Self.passkeyRefused)
            } catch {
                if (error as? TrifactorError)?.problem?.invalidFields.contains(where: { $0.name == "new_password" }) == true {
                    flow.newPassword = nil
                    session.flows { $0.reset = flow }
                }
                return jsonRedirect(resetRefused(session, error, factor: factor))
            }
            return jsonRedirect(resetDone(session, email: flow.email))
        }
    }

    /// The page of the reset's current step.
    func resetStep(_ flow: ResetFlow) -> String {
        guard let reset = flow.reset else { return "/forgot/code" }
        if flow.push != nil { return "/forgot/push" }
        if flow.factor?.hint.kind == .passkey && flow.newPassword != nil { return "/forgot/passkey" }
        if reset.secondFactorRequired && flow.factor == nil { return "/forgot/factor" }
        return "/forgot/new"
    }

    /// Sets the new password with `complete`: signed out everywhere, on to the sign-in page; a refusal says what to do.
    func resetAnswered(_ session: BankSession, factor: CodeChallenge? = nil, code: String? = nil, _ complete: () throws -> Void) -> Response {
        guard let email = session.flows({ $0.reset?.email }) else { return redirect("/") }
        do {
            try complete()
        } catch {
            return resetRefused(session, error, factor: factor, code: code)
        }
        return resetDone(session, email: email)
    }

    func resetDone(_ session: BankSession, email: String) -> Response {
        session.flows { $0.reset = nil }
        session.dropSignIn()
        session.set(stage: .password(email: email))
        session.flash(Self.passwordReset)
        return redirect("/signin/password")
    }

    /// A refused new password or proof: back to the new-password page with the reason next to its field (a refused
    /// password keeps the `code` typed with it: Trifactor checks the password first and spends nothing), or, when the
    /// reset cannot go on, to its start with the reason.
    func resetRefused(_ session: BankSession, _ error: any Error, factor: CodeChallenge?, code: String? = nil) -> Response {
        let problem = (error as? TrifactorError)?.problem
        if let fields = problem?.invalidFields, !fields.isEmpty {
            var errors: [String: String] = [:]
            for field in fields {
                errors[field.name == "new_password" ? "new_password" : "code"] = field.name == "new_password"
                    ? Self.fieldSentence(field) : "Enter the code as it was sent: 6 digits (a recovery code has 10 letters and digits)."
            }
            return back(to: "/forgot/new", session, FormDraft(values: errors["code"] == nil ? ["code": code ?? ""] : [:], errors: errors))
        }
        if var factor {
            switch Self.verdict(error, tries: &factor.wrongTries, texted: factor.isTexted) {
            case .again(let sentence)?, .newCode(let sentence)?:
                session.flows { $0.reset?.factor = factor }
                return back(to: "/forgot/new", session, FormDraft(errors: ["code": sentence]))
            case .over(let sentence)?:
                return endReset(session, nil, saying: "\(sentence) The reset was cancelled and your password is unchanged.")
            case nil:
                break
            }
        }
        if problem?.code == .rateLimited {
            session.flash(Self.sentence(error))
            return redirect(session.flows({ $0.reset }).map(resetStep) ?? "/forgot")
        }
        return endReset(session, error)
    }

    /// Ends the reset: back to its first page (the email kept) saying why; the password is unchanged.
    func endReset(_ session: BankSession, _ error: (any Error)?, saying text: String? = nil) -> Response {
        let email = session.flows { flows -> String? in defer { flows.reset = nil }; return flows.reset?.email }
        let sentence: String
        if let text {
            sentence = text
        } else {
            switch error as? TrifactorError {
            case .approvalDenied?: sentence = "The reset was denied on your device, so your password is unchanged. If that was not you, nothing more is needed."
            case .expired?: sentence = "The approval took too long, so your password is unchanged. Start again when you are ready."
            case .server(let p)? where p.code == .invalidResetCredential:
                sentence = "This reset took too long or was finished already, so your password is unchanged. Start again: we email you a new code."
            case .server(let p)? where p.code == .secondFactorRequired:
                sentence = "Your ways to confirm changed during the reset, so your password is unchanged. Start again."
            case .server(let p)? where p.code == .secondFactorFrozen: sentence = Self.frozen
            case let error?: sentence = Self.sentence(error) + " Your password is unchanged."
            case nil: sentence = "The reset could not go on, so your password is unchanged. Start again."
            }
        }
        session.keep(FormDraft(values: ["email": email ?? ""], errors: ["notice": sentence]), for: "/forgot", now: now())
        return redirect("/forgot")
    }
}
