import Foundation
import HTTP
import TrifactorKit

/// "Forgot your password?": the email, the 8-digit code Trifactor emails
/// (the same page for every address, so it tells no one who banks here),
/// then one of the customer's second factors (a reset is never a way around
/// them), then the new password, checked like any other. Every session of
/// the customer ends and they sign in with the new password. A code is
/// typed on the same page as the new password; a device's approval and a
/// passkey come after it. Every step is a page whose GET changes nothing
/// (Back and refresh are safe), a form posted from an out-of-date page does
/// nothing, every refusal says what to do next, and "Start again" leaves the
/// password unchanged.
extension BankApp {
    /// What the sign-in page says once the password is changed.
    static let passwordReset = "Your password is changed, and you are signed out everywhere. Sign in with your new password."

    func addReset(_ router: inout Router) {
        route(&router, "GET", "/forgot") { [self] request in
            let (viewer, cookies) = self.viewer(request)
            if viewer.isSignedIn { return redirect("/settings#password") }
            var email: String?
            if let session = viewer as? BankSession {
                if let flow = liveReset(session) { return redirect(resetStep(flow)) }
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
            guard Self.looksLikeEmail(email) else {
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
            let started = now()
            session.flows { flows in
                flows.opening = nil
                flows.reset = ResetFlow(email: email)
                // Trifactor's window began with the first code asked for in the last ten minutes.
                if flows.resetTries[email].map({ started >= $0.window.addingTimeInterval(Self.emailCodeWindow) }) ?? true {
                    flows.resetTries[email] = EmailTries(window: started)
                }
            }
            return redirect("/forgot/code", cookies: cookies)
        }
        route(&router, "GET", "/forgot/code") { [self] request in
            let session = self.session(request).session
            guard let session, let flow = liveReset(session), flow.reset == nil else { return outOfStep(session, request) }
            let draft = session.draft(for: "/forgot/code", now: now())
            return page(resetCodePage(session, request, flow, tries: emailTries(session, flow), error: draft?.errors["code"], notice: session.takeNotice()))
        }
        route(&router, "POST", "/forgot/code") { [self] request in
            let (session, form, _) = try posted(request)
            guard let flow = liveReset(session), flow.reset == nil else { return outOfStep(session, request) }
            let client = trifactor(session, request), email = flow.email, typed = form["code"] ?? ""
            let reset: PasswordReset
            do {
                reset = try blocking({ try await client.verifyPasswordReset(email: email, code: typed) })
            } catch let error as TrifactorError where error.problem?.code == .invalidCode {
                // Wrong, used, expired, or no such account: Trifactor answers the same, and counts five per ten minutes.
                let tries = session.flows { flows -> EmailTries in
                    flows.resetTries[email, default: EmailTries(window: now())].tries += 1
                    return flows.resetTries[email]!
                }
                let left = Self.emailCodeTries - tries.tries
                return back(to: "/forgot/code", session, FormDraft(errors: ["code": left > 0
                    ? "That code is wrong or has expired. At most \(left) more \(left == 1 ? "try" : "tries")."
                    : Self.emailLocked(window: tries.window, now: now())]))
            } catch let error as TrifactorError where error.problem?.invalidFields.isEmpty == false {
                return back(to: "/forgot/code", session, FormDraft(errors: ["code": "Enter the 8-digit code from the email."]))
            } catch {
                return back(to: "/forgot/code", session, FormDraft(errors: ["code": Self.sentence(error)]))
            }
            // The code is spent: whichever tab got here first carries the reset on.
            guard let step = updateReset(session, flow.id, { $0.reset = reset; return resetStep($0) }) else { return outOfStep(session, request) }
            return redirect(step)
        }
        route(&router, "POST", "/forgot/resend") { [self] request in
            let (session, _, _) = try posted(request)
            guard let flow = liveReset(session), flow.reset == nil else { return outOfStep(session, request) }
            let email = flow.email
            let tries = session.flows { flows -> EmailTries in
                if flows.resetTries[email].map({ now() >= $0.window.addingTimeInterval(Self.emailCodeWindow) }) ?? true {
                    flows.resetTries[email] = EmailTries(window: now())
                }
                return flows.resetTries[email]!
            }
            if tries.tries >= Self.emailCodeTries {
                session.flash(Self.emailLocked(window: tries.window, now: now(), typed: false))
                return redirect("/forgot/code")
            }
            let client = trifactor(session, request)
            do {
                try blocking({ try await client.requestPasswordReset(email: email) })
                session.flash("If there is an account with \(email), we sent it a new code. It can take a minute to arrive; the old one no longer works.")
            } catch {
                session.flash(Self.sentence(error))
            }
            return redirect("/forgot/code")
        }
        route(&router, "POST", "/forgot/cancel") { [self] request in
            let (session, _, _) = try posted(request)
            guard liveReset(session) != nil else { return outOfStep(session, request) }
            session.flows { $0.reset = nil }
            session.flash("Nothing was changed: your password is the same as before.")
            return redirect("/")
        }
        route(&router, "GET", "/forgot/factor") { [self] request in
            let session = self.session(request).session
            guard let session, let flow = liveReset(session), let reset = flow.reset, resetStep(flow) == "/forgot/factor" else {
                return outOfStep(session, request)
            }
            return page(resetFactorPage(session, request, reset, notice: session.takeNotice()))
        }
        route(&router, "POST", "/forgot/another") { [self] request in
            // "Use another way": the factor chosen before is left (a password typed for it is forgotten).
            let (session, _, _) = try posted(request)
            guard let flow = liveReset(session), flow.reset?.secondFactorRequired == true else { return outOfStep(session, request) }
            _ = updateReset(session, flow.id) { $0.factor = nil; $0.push = nil; $0.newPassword = nil }
            return redirect("/forgot/factor")
        }
        route(&router, "POST", "/forgot/challenge") { [self] request in
            let (session, form, _) = try posted(request)
            guard let flow = liveReset(session), let reset = flow.reset, resetStep(flow) == "/forgot/factor",
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
            guard updateReset(session, flow.id, { $0.factor = CodeChallenge(hint) }) != nil else { return outOfStep(session, request) }
            return redirect("/forgot/new")
        }
        route(&router, "GET", "/forgot/new") { [self] request in
            let session = self.session(request).session
            guard let session, let flow = liveReset(session), resetStep(flow) == "/forgot/new" else { return outOfStep(session, request) }
            let draft = session.draft(for: "/forgot/new", now: now())
            return page(resetNewPage(session, request, flow, draft: draft, notice: session.takeNotice()))
        }
        route(&router, "POST", "/forgot/new") { [self] request in
            let (session, form, _) = try posted(request)
            // The page names the factor it was for: one chosen since in another tab makes it out of date.
            guard let flow = liveReset(session), let reset = flow.reset, resetStep(flow) == "/forgot/new",
                  (form["factor"] ?? "") == (flow.factor?.hint.id ?? "") else { return outOfStep(session, request) }
            let password = form.raw("new_password") ?? ""
            guard !password.isEmpty else { return back(to: "/forgot/new", session, FormDraft(errors: ["new_password": "Choose a new password."])) }
            guard let factor = flow.factor else {
                return resetAnswered(session, flow) { try blocking({ try await reset.complete(newPassword: password) }) }
            }
            switch factor.hint.kind {
            case .device:
                return approveReset(session, flow, reset, factor.hint, password: password)
            case .passkey:
                guard updateReset(session, flow.id, { $0.newPassword = password }) != nil else { return outOfStep(session, request) }
                return redirect("/forgot/passkey")
            default:
                let code = (form["code"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
                guard !code.isEmpty else {
                    return back(to: "/forgot/new", session, FormDraft(errors: ["code": "Enter the code.", "new_password": "Type the new password again."]))
                }
                return resetAnswered(session, flow, code: code) {
                    try blocking({ try await reset.complete(newPassword: password, proving: factor.hint, with: .code(code)) })
                }
            }
        }
        route(&router, "POST", "/forgot/text") { [self] request in
            let (session, _, _) = try posted(request)
            guard let flow = liveReset(session), let reset = flow.reset, let factor = flow.factor, factor.isTexted else {
                return outOfStep(session, request)
            }
            do {
                _ = try blocking({ try await reset.challenge(factor.hint) })
            } catch {
                guard Self.isSendLimit(error) else { return endReset(session, error) }
                session.flash(Self.cannotText(error, others: reset.hints.filter { $0.id != factor.hint.id }))
                return redirect("/forgot/new")
            }
            _ = updateReset(session, flow.id) { $0.factor = CodeChallenge(factor.hint) }
            session.flash(Self.newCodeSent(factor.hint))
            return redirect("/forgot/new")
        }
        route(&router, "POST", "/forgot/call") { [self] request in
            let (session, _, _) = try posted(request)
            guard let flow = liveReset(session), let reset = flow.reset, let code = flow.factor, case .phone(let masked) = code.hint.kind else {
                return outOfStep(session, request)
            }
            do {
                try blocking({ try await reset.callInstead(code.hint) })
            } catch let error as TrifactorError where error.problem?.code == "second_factor_unusable" {
                // The code died (three wrong tries, or its time ran out): there is nothing left to read out.
                session.flash("That code has expired, so there is nothing to read out: send a new code.")
                return redirect("/forgot/new")
            } catch {
                guard Self.isSendLimit(error) else { return endReset(session, error) }
                session.flash(Self.cannotText(error, others: reset.hints.filter { $0.id != code.hint.id }).replacingOccurrences(of: "send another text",
                                                                                                                                with: "call you"))
                return redirect("/forgot/new")
            }
            session.flash("We are calling \(masked) now: the voice reads out the same code.")
            return redirect("/forgot/new")
        }
        route(&router, "GET", "/forgot/push") { [self] request in
            let session = self.session(request).session
            guard let session, let flow = liveReset(session), resetStep(flow) == "/forgot/push", let reset = flow.reset, let push = flow.push,
                  let hint = flow.factor?.hint, let password = flow.newPassword else { return outOfStep(session, request) }
            do {
                switch try blocking({ try await push.state() }) {
                case .pending:
                    return page(approvalPage(session, request, number: push.number, cancel: "/forgot/cancel"))
                case .approved:
                    // The password leaves the session now; the approval stays good if it is refused, so the customer
                    // types another on the new-password page and no new push is needed.
                    _ = updateReset(session, flow.id) { $0.newPassword = nil }
                    return resetAnswered(session, flow) {
                        try blocking({ try await reset.complete(newPassword: password, proving: hint, with: .approval(push)) })
                    }
                case .denied:
                    return endReset(session, TrifactorError.approvalDenied)
                case .expired:
                    _ = updateReset(session, flow.id) { $0.push = nil; $0.newPassword = nil }
                    session.flash("The approval on your device took too long. Type the new password again to send a new one, or use another way.")
                    return redirect("/forgot/new")
                }
            } catch {
                return endReset(session, error)
            }
        }
        route(&router, "GET", "/forgot/passkey") { [self] request in
            let session = self.session(request).session
            guard let session, let flow = liveReset(session), resetStep(flow) == "/forgot/passkey" else { return outOfStep(session, request) }
            return page(resetPasskeyPage(session, request, notice: session.takeNotice()))
        }
        route(&router, "POST", "/forgot/passkey/options") { [self] request in
            let (session, _) = try postedJSON(request)
            guard let flow = liveReset(session), let reset = flow.reset, resetStep(flow) == "/forgot/passkey", let hint = flow.factor?.hint else {
                return jsonError(409, "This reset is over or changed in another tab. Reload the page.")
            }
            do {
                guard case .passkey(let options) = try blocking({ try await reset.challenge(hint) }) else { return jsonError(409, "That is not a passkey.") }
                return Response.json(RequestBody(options: options))
            } catch let error as TrifactorError where error.problem.map({ $0.status < 500 && $0.code != .rateLimited }) ?? false {
                return jsonRedirect(endReset(session, error))
            } catch {
                return jsonRefusal(error)
            }
        }
        route(&router, "POST", "/forgot/passkey") { [self] request in
            let (session, _) = try postedJSON(request)
            guard let flow = liveReset(session), let reset = flow.reset, resetStep(flow) == "/forgot/passkey", let factor = flow.factor,
                  let password = flow.newPassword else {
                return jsonError(409, "This reset is over or changed in another tab. Reload the page.")
            }
            guard let body = try? WireJSON.sharedDecoder.decode(AssertionBody.self, from: Data(request.body)) else {
                return jsonError(400, "That passkey could not be read. Try again.")
            }
            do {
                try blocking({ try await reset.complete(newPassword: password, proving: factor.hint, with: .assertion(body.assertion)) })
            } catch let error as TrifactorError where error.problem?.code == .invalidCode {
                var counted = factor
                if case .over(let sentence)? = Self.verdict(error, tries: &counted.wrongTries, texted: false) {
                    return jsonRedirect(endReset(session, nil, saying: sentence.replacingOccurrences(of: "That code is wrong", with: "That passkey was not accepted")
                                                 + " The reset was cancelled and your password is unchanged."))
                }
                return jsonError(400, Self.passkeyRefused)
            } catch {
                if (error as? TrifactorError)?.problem?.invalidFields.contains(where: { $0.name == "new_password" }) == true {
                    _ = updateReset(session, flow.id) { $0.newPassword = nil }
                }
                return jsonRedirect(resetRefused(session, error, factor: factor))
            }
            return jsonRedirect(resetDone(session, flow))
        }
    }
}
