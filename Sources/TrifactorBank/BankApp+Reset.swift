import Foundation
import HTTP
import TrifactorKit
import WebUI

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
    static let passwordReset =
        "Your password is changed, and you are signed out everywhere. Sign in with your new password."

    /// The routes of a forgotten password, step by step: each HTTP method and path, and the handler that answers it.
    func addReset(_ router: inout Router) {
        route(&router, "GET", "/forgot", showForgot)
        route(&router, "POST", "/forgot", startReset)
        route(&router, "GET", "/forgot/code", showResetCode)
        route(&router, "POST", "/forgot/code", checkResetCode)
        route(&router, "POST", "/forgot/resend", resendResetCode)
        route(&router, "POST", "/forgot/cancel", cancelReset)
        route(&router, "GET", "/forgot/factor", showResetFactor)
        route(&router, "POST", "/forgot/another", resetAnotherWay)
        route(&router, "POST", "/forgot/challenge", challengeResetFactor)
        route(&router, "GET", "/forgot/new", showNewPassword)
        route(&router, "POST", "/forgot/new", setNewPassword)
        route(&router, "POST", "/forgot/text", resendResetText)
        route(&router, "POST", "/forgot/call", callForReset)
        route(&router, "GET", "/forgot/push", showResetApproval)
        route(&router, "GET", "/forgot/passkey", showResetPasskey)
        route(&router, "POST", "/forgot/passkey/options", resetPasskeyOptions)
        route(&router, "POST", "/forgot/passkey", resetWithPasskey)
    }

    /// `GET /forgot`: the email form of a forgotten password (or the reset's current step).
    func showForgot(_ request: Request) -> Response {
        let (viewer, cookies) = self.viewer(request)
        if viewer.isSignedIn { return redirect("/settings#password") }
        var email: String?
        if let session = viewer as? BankSession {
            if let flow = liveReset(session) { return redirect(resetStep(flow)) }
            if case .password(let typed) = session.stage { email = typed }
        }
        let draft = self.draft(for: "/forgot", viewer, request)
        return page(
            forgotPage(
                viewer, request, email: draft?["email"] ?? email, error: draft?.errors["email"],
                notice: draft?.errors["notice"] ?? (viewer as? BankSession)?.takeNotice()), cookies: cookies)
    }

    /// `POST /forgot`: asks Trifactor to email a reset code; the same page for every address.
    func startReset(_ request: Request) throws -> Response {
        if let limited = signInLimited(request) { return limited }
        let (viewer, form) = try postedBeforeSession(request)
        if viewer.isSignedIn { return redirect("/settings#password") }
        let email = (form["email"] ?? "").lowercased()
        guard Self.looksLikeEmail(email) else {
            return back(
                to: "/forgot", viewer,
                FormDraft(
                    values: ["email": form["email"] ?? ""],
                    errors: ["email": "Enter your email address, like ann@example.com."]))
        }
        let (session, cookies) = startSession(viewer)
        session.dropSignIn()
        session.set(stage: .start)
        let client = trifactor(session, request)
        do {
            try blocking({ try await client.requestPasswordReset(email: email) })
        } catch {
            let sentence =
                (error as? TrifactorError)?.problem?.invalidFields.first.map(Self.fieldSentence) ?? Self.sentence(error)
            return back(
                to: "/forgot", session, FormDraft(values: ["email": email], errors: ["email": sentence]),
                cookies: cookies)
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

    /// `GET /forgot/code`: the page for the emailed reset code.
    func showResetCode(_ request: Request) -> Response {
        let session = self.session(request).session
        guard let session, let flow = liveReset(session), flow.reset == nil else { return outOfStep(session, request) }
        let draft = session.draft(for: "/forgot/code", now: now())
        return page(
            resetCodePage(
                session, request, flow, tries: emailTries(session, flow), error: draft?.errors["code"],
                notice: session.takeNotice()))
    }

    /// `POST /forgot/code`: the emailed code opens the reset; wrong ones are counted.
    func checkResetCode(_ request: Request) throws -> Response {
        let (session, form, _) = try posted(request)
        guard let flow = liveReset(session), flow.reset == nil else { return outOfStep(session, request) }
        let client = trifactor(session, request)
        let email = flow.email
        let typed = form["code"] ?? ""
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
            return back(
                to: "/forgot/code", session,
                FormDraft(errors: [
                    "code": left > 0
                        ? "That code is wrong or has expired. At most \(left) more \(left == 1 ? "try" : "tries")."
                        : Self.emailLocked(window: tries.window, now: now())
                ]))
        } catch let error as TrifactorError where error.problem?.invalidFields.isEmpty == false {
            return back(
                to: "/forgot/code", session, FormDraft(errors: ["code": "Enter the 8-digit code from the email."]))
        } catch {
            return back(to: "/forgot/code", session, FormDraft(errors: ["code": Self.sentence(error)]))
        }
        // The code is spent: whichever tab got here first carries the reset on.
        guard
            let step = updateReset(
                session, flow.id,
                {
                    $0.reset = reset
                    return resetStep($0)
                })
        else { return outOfStep(session, request) }
        return redirect(step)
    }

    /// `POST /forgot/resend`: a new emailed reset code, within Trifactor's window of wrong codes.
    func resendResetCode(_ request: Request) throws -> Response {
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
            session.flash(
                "If there is an account with \(email), we sent it a new code. It can take a minute to arrive; the old one no longer works."
            )
        } catch {
            session.flash(Self.sentence(error))
        }
        return redirect("/forgot/code")
    }

    /// `POST /forgot/cancel`: drops the reset; the password stays as it was.
    func cancelReset(_ request: Request) throws -> Response {
        let (session, _, _) = try posted(request)
        guard liveReset(session) != nil else { return outOfStep(session, request) }
        session.flows { $0.reset = nil }
        session.flash("Nothing was changed: your password is the same as before.")
        return redirect("/")
    }
}
