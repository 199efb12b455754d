import Foundation
import HTTP
import TrifactorKit
import WebUI

/// The second step of signing in: the code page (a wrong code, a code used
/// up, "Send a new code", "Call me instead", "Use another way", "Start
/// again"), a device's approval, and signing out.
extension BankApp {

    /// `GET /signin/code`: the code page of the sign-in.
    func showSignInCode(_ request: Request) -> Response {
        let session = self.session(request).session
        guard let session, case .secondFactor = session.stage, let code = session.code, code.hint.kind != .passkey
        else { return outOfStep(session, request) }
        let draft = session.draft(for: "/signin/code", now: now())
        return page(codePage(session, request, code, error: draft?.errors["code"], notice: session.takeNotice()))
    }

    /// `POST /signin/code`: a code that completes the sign-in; too many wrong ones cancel it.
    func checkSignInCode(_ request: Request) throws -> Response {
        let (session, form, _) = try posted(request)
        guard case .secondFactor(let email) = session.stage, let resolver = session.resolver, var code = session.code
        else {
            return outOfStep(session, request)
        }
        let (hint, typed) = (code.hint, form["code"] ?? "")
        do {
            _ = try blocking({ try await resolver.resolve(hint, with: .code(typed)) })
            return try finishSignIn(session, email: email, request: request, next: "/accounts")
        } catch {
            return codeRefused(session, &code, error, page: "/signin/code") {
                restart(session, nil, saying: "\($0) The sign-in was cancelled: start again when you are ready.")
            } ?? restart(session, error)
        }
    }

    /// `POST /signin/resend`: a new texted code for the sign-in.
    func resendSignInCode(_ request: Request) throws -> Response {
        let (session, _, _) = try posted(request)
        guard case .secondFactor = session.stage, let resolver = session.resolver, let code = session.code,
            code.isTexted
        else {
            return outOfStep(session, request)
        }
        do {
            _ = try blocking({ try await resolver.challenge(code.hint) })
        } catch {
            guard Self.isSendLimit(error) else { return restart(session, error) }
            session.flash(Self.cannotText(error, others: resolver.hints.filter { $0.id != code.hint.id }))
            return redirect("/signin/code")
        }
        session.set(code: CodeChallenge(code.hint))
        session.flash(Self.newCodeSent(code.hint))
        return redirect("/signin/code")
    }

    /// `POST /signin/call`: the sign-in's code read out by a call.
    func callForSignIn(_ request: Request) throws -> Response {
        let (session, _, _) = try posted(request)
        guard case .secondFactor = session.stage, let resolver = session.resolver, let code = session.code,
            case .phone(let masked) = code.hint.kind
        else { return outOfStep(session, request) }
        return callInstead(
            session, masked: masked, others: resolver.hints.filter { $0.id != code.hint.id }, page: "/signin/code",
            call: { try blocking({ try await resolver.callInstead(code.hint) }) }, otherwise: { restart(session, $0) })
    }

    /// `GET /signin/push`: waits for the device's approval of the sign-in's second step.
    func showSignInApproval(_ request: Request) -> Response {
        let session = self.session(request).session
        guard let session, case .secondFactor(let email) = session.stage, let resolver = session.resolver,
            let (push, hint) = session.push
        else { return outOfStep(session, request) }
        do {
            switch try blocking({ try await push.state() }) {
            case .pending:
                return page(approvalPage(session, request, number: push.number))
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

    /// `GET /signin/device`: waits for the device's approval of a passwordless sign-in.
    func showDeviceSignIn(_ request: Request) -> Response {
        let session = self.session(request).session
        guard let session, case .secondFactor(let email) = session.stage, let push = session.passwordless else {
            return outOfStep(session, request)
        }
        do {
            switch try blocking({ try await push.approval.state() }) {
            case .pending:
                return page(approvalPage(session, request, number: push.number))
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

    /// `POST /signin/cancel`: drops the sign-in under way.
    func cancelSignIn(_ request: Request) throws -> Response {
        let (session, _, _) = try posted(request)
        if session.isSignedIn { return redirect("/accounts") }
        return restart(session, nil)
    }

    /// `POST /signout`: ends this browser's session and the customer's Trifactor session.
    func signOutHere(_ request: Request) throws -> Response {
        let (session, _, cookie) = try posted(request)
        return signOut(session, cookie, request, notice: nil)
    }

    /// A refused code of the sign-in or coming back: back to the code page at `page` saying what is left, or, after too
    /// many, `over` with the sentence; nil when the refusal is not about the code.
    func codeRefused(
        _ session: BankSession, _ code: inout CodeChallenge, _ error: any Error, page: String,
        over: (String) -> Response
    ) -> Response? {
        switch Self.verdict(error, tries: &code.wrongTries, texted: code.isTexted) {
        case .again(let sentence)?, .newCode(let sentence)?:
            session.set(code: code)
            return back(to: page, session, FormDraft(errors: ["code": sentence]))
        case .over(let sentence)?:
            return over(sentence)
        case nil:
            return nil
        }
    }

    /// "Call me instead" of a texted code (a sign-in's or a reset's): `call` has Trifactor read the code out, then the code page
    /// at `page` says so. A code that died has nothing to read out; a call that cannot be made yet offers the `others`;
    /// any other refusal is `otherwise`'s answer.
    func callInstead(
        _ session: BankSession, masked: String, others: [FactorHint], page: String, call: () throws -> Void,
        otherwise: (any Error) -> Response
    ) -> Response {
        do {
            try call()
        } catch let error as TrifactorError where error.problem?.code == "second_factor_unusable" {
            // The code died (three wrong tries, or its time ran out): there is nothing left to read out.
            session.flash("That code has expired, so there is nothing to read out: send a new code.")
            return redirect(page)
        } catch {
            guard Self.isSendLimit(error) else { return otherwise(error) }
            session.flash(
                Self.cannotText(error, others: others).replacingOccurrences(of: "send another text", with: "call you"))
            return redirect(page)
        }
        session.flash("We are calling \(masked) now: the voice reads out the same code.")
        return redirect(page)
    }

    /// Ends the customer's Trifactor session and this bank session; the sign-in page says `notice` (or "You are signed out.").
    func signOut(_ session: BankSession, _ cookie: String?, _ request: Request, notice: String?) -> Response {
        var cookies = [SessionCookie.cleared(secure: configuration.secure)]
        if let standard = session.standard {
            // Signed in at Trifactor: signing out ends that session too, and Trifactor sends the browser back.
            sessions.end(cookie)
            if notice == nil {
                if let url = standardSignOutURL(standard, request) { return redirect(url, cookies: cookies) }
                return signOut(
                    session, nil, request,
                    notice: "You are signed out of the bank, but Trifactor could not be reached to sign you out "
                        + "there too: close this browser if others use it.")
            }
        } else {
            let client = trifactor(session, request)
            try? blocking({ try await client.signOut() })
            sessions.end(cookie)
        }
        guard let notice else { return redirect("/?signed_out=1", cookies: cookies) }
        // The session is gone: the notice rides in the draft cookie of the start page.
        if let draft = drafts.setCookie(
            FormDraft(errors: ["notice": notice]), for: "/", now: now(), secure: configuration.secure)
        {
            cookies.append(draft)
        }
        return redirect("/", cookies: cookies)
    }

    /// "We sent a new code to +*****3456. The old one no longer works."
    static func newCodeSent(_ hint: FactorHint) -> String {
        guard case .phone(let masked) = hint.kind else { return "Type the new code." }
        return "We sent a new code to \(masked). The old one no longer works."
    }
}
