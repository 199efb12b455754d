import Foundation
import HTTP
import TrifactorKit

/// The reset's state and how its steps end: the reset under way (none once
/// signed in or expired), changes that never write over a newer reset, the
/// page of its current step, the device's approval, and what a refusal or
/// success leads to.
extension BankApp {
    /// The reset under way, if any: none for a signed-in customer, and one whose time ran out is dropped.
    func liveReset(_ session: BankSession?) -> ResetFlow? {
        guard let session else { return nil }
        if session.isSignedIn {
            session.flows { $0.reset = nil }
            return nil
        }
        guard let flow = session.flows({ $0.reset }) else { return nil }
        if let reset = flow.reset, now() > reset.expiresAt {
            session.flows { if $0.reset?.id == flow.id { $0.reset = nil } }
            session.keep(
                FormDraft(values: ["email": flow.email], errors: ["notice": Self.resetExpired]), for: "/forgot",
                now: now())
            return nil
        }
        return flow
    }

    static let resetExpired =
        "This reset took too long or was finished already, so your password is unchanged. Start again: we email you a new code."

    /// Changes the reset `id` in the session (not one started since in another tab) and answers what `change` returns;
    /// nil when the reset is gone or another one replaced it.
    func updateReset<T>(_ session: BankSession, _ id: UUID, _ change: (inout ResetFlow) -> T) -> T? {
        session.flows { flows in
            guard var flow = flows.reset, flow.id == id else { return nil }
            let answer = change(&flow)
            flows.reset = flow
            return answer
        }
    }

    /// The wrong emailed codes counted for the reset's email.
    func emailTries(_ session: BankSession, _ flow: ResetFlow) -> EmailTries {
        session.flows { $0.resetTries[flow.email] } ?? EmailTries(window: now())
    }

    /// The page of the reset's current step.
    func resetStep(_ flow: ResetFlow) -> String {
        guard let reset = flow.reset else { return "/forgot/code" }
        // Waiting for the device only while the password waits with it (a refused one goes back to be typed again).
        if flow.push != nil && flow.newPassword != nil { return "/forgot/push" }
        if flow.factor?.hint.kind == .passkey && flow.newPassword != nil { return "/forgot/passkey" }
        if reset.secondFactorRequired && flow.factor == nil { return "/forgot/factor" }
        return "/forgot/new"
    }

    /// The device's approval of the reset: a push (one, however often the form is sent), then its page.
    func approveReset(
        _ session: BankSession, _ flow: ResetFlow, _ reset: PasswordReset, _ hint: FactorHint, password: String
    ) -> Response {
        // An approval already given (its new password refused) confirms the next one: no new push.
        let send = updateReset(session, flow.id) { flow -> Bool in
            flow.newPassword = password
            guard flow.push == nil, !flow.pushing else { return false }
            flow.pushing = true
            return true
        }
        guard let send else { return redirect("/forgot") }
        guard send else { return redirect("/forgot/push") }
        let pushed: PushApproval
        do {
            guard case .push(let push) = try blocking({ try await reset.challenge(hint) }) else {
                // Trifactor sends a device a few approvals at a time; it sent none now.
                _ = updateReset(session, flow.id) {
                    $0.pushing = false
                    $0.newPassword = nil
                }
                session.flash(
                    "We cannot send another approval to your device just now. Try again in a few minutes, or use another way."
                )
                return redirect("/forgot/new")
            }
            pushed = push
        } catch {
            _ = updateReset(session, flow.id) {
                $0.pushing = false
                $0.newPassword = nil
            }
            guard Self.isSendLimit(error) else { return endReset(session, error) }
            session.flash(Self.sentence(error))
            return redirect("/forgot/new")
        }
        _ = updateReset(session, flow.id) {
            $0.push = pushed
            $0.pushing = false
        }
        return redirect("/forgot/push")
    }

    /// Sets the new password with `complete`: signed out everywhere, on to the sign-in page; a refusal says what to do.
    func resetAnswered(_ session: BankSession, _ flow: ResetFlow, code: String? = nil, _ complete: () throws -> Void)
        -> Response
    {
        do {
            try complete()
        } catch {
            return resetRefused(session, error, factor: flow.factor, code: code)
        }
        return resetDone(session, flow)
    }

    func resetDone(_ session: BankSession, _ flow: ResetFlow) -> Response {
        session.flows {
            $0.reset = nil
            $0.resetTries[flow.email] = nil
        }
        session.dropSignIn()
        session.set(stage: .password(email: flow.email))
        session.flash(Self.passwordReset)
        return redirect("/signin/password")
    }

    /// A refused new password or proof: back to the new-password page with the reason next to its field (a refused
    /// password keeps the `code` typed with it: Trifactor checks the password first and spends nothing), or, when the
    /// reset cannot go on, to its start with the reason.
    func resetRefused(_ session: BankSession, _ error: any Error, factor: CodeChallenge?, code: String? = nil)
        -> Response
    {
        let problem = (error as? TrifactorError)?.problem
        if let fields = problem?.invalidFields, !fields.isEmpty {
            var errors: [String: String] = [:]
            for field in fields {
                errors[field.name == "new_password" ? "new_password" : "code"] =
                    field.name == "new_password"
                    ? Self.fieldSentence(field)
                    : "Enter the code as it was sent: 6 digits (a recovery code has 10 letters and digits)."
            }
            return back(
                to: "/forgot/new", session,
                FormDraft(values: errors["code"] == nil ? ["code": code ?? ""] : [:], errors: errors))
        }
        if var factor, factor.hint.kind != .device {
            switch Self.verdict(error, tries: &factor.wrongTries, texted: factor.isTexted) {
            case .again(let sentence)?, .newCode(let sentence)?:
                session.flows { if $0.reset?.factor?.hint.id == factor.hint.id { $0.reset?.factor = factor } }
                return back(to: "/forgot/new", session, FormDraft(errors: ["code": sentence]))
            case .over(let sentence)?:
                return endReset(
                    session, nil, saying: "\(sentence) The reset was cancelled and your password is unchanged.")
            case nil:
                break
            }
        }
        if problem?.code == .rateLimited {
            session.flash(Self.sentence(error))
            return redirect(liveReset(session).map(resetStep) ?? "/forgot")
        }
        return endReset(session, error)
    }

    /// Ends the reset: back to its first page (the email kept) saying why.
    func endReset(_ session: BankSession, _ error: (any Error)?, saying text: String? = nil) -> Response {
        let email = session.flows { flows -> String? in
            defer { flows.reset = nil }
            return flows.reset?.email
        }
        let sentence: String
        if let text {
            sentence = text
        } else {
            let failure = error as? TrifactorError
            switch (failure?.code, failure?.problem?.code) {
            case (.approvalDenied?, _):
                sentence =
                    "The reset was denied on your device, so your password is unchanged. If that was not you, nothing more is needed."
            case (.expired?, _):
                sentence = "The approval took too long, so your password is unchanged. Start again when you are ready."
            case (.transport?, _):
                // The password may or may not have been set: say so rather than guess.
                sentence =
                    "We could not reach our sign-in service, so we cannot tell whether your password changed. Try signing in with the new one; "
                    + "if it does not work, start again."
            case (_, .invalidResetCredential?): sentence = Self.resetExpired
            case (_, .secondFactorRequired?):
                sentence = "Your ways to confirm changed during the reset, so your password is unchanged. Start again."
            case (_, .secondFactorFrozen?): sentence = Self.frozen
            default:
                sentence =
                    failure.map { Self.sentence($0) + " Your password is unchanged." }
                    ?? "The reset could not go on, so your password is unchanged. Start again."
            }
        }
        session.keep(
            FormDraft(values: ["email": email ?? ""], errors: ["notice": sentence]), for: "/forgot", now: now())
        return redirect("/forgot")
    }
}
