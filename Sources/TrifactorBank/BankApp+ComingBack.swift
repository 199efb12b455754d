import Foundation
import HTTP
import TrifactorKit
import WebUI

/// Confirming it's you again: after the idle time (5 minutes by default), or
/// when the tab was hidden that long, balances hide and the customer
/// confirms with a second factor (a Trifactor step-up) before going on, as
/// mobile banks ask for Face ID again after the app was in the background;
/// and a settings change Trifactor wants a fresh second factor for asks the
/// same way, saying why, then carries the change out. A passkey is offered
/// first when the customer has one. Too many wrong codes sign the customer out.
extension BankApp {
    /// The routes of confirming it's the customer again: each HTTP method and path, and the handler that answers it.
    func addComingBack(_ router: inout Router) {
        route(&router, "GET", "/confirm", showConfirm)
        route(&router, "POST", "/confirm/challenge", challengeConfirm)
        route(&router, "GET", "/confirm/code", showConfirmCode)
        route(&router, "POST", "/confirm/code", checkConfirmCode)
        route(&router, "POST", "/confirm/resend", resendConfirmCode)
        route(&router, "POST", "/confirm/cancel", cancelConfirm)
    }

    /// `GET /confirm`: the factors that can confirm it's the customer, saying why the bank asks.
    func showConfirm(_ request: Request) throws -> Response {
        let session = self.session(request).session
        guard let session, session.isSignedIn else { return outOfStep(session, request) }
        let intent = session.flows { $0.stepUp }
        guard intent != nil || session.isAway(now: now(), idle: configuration.idleTimeout) else {
            return redirect(currentStep(session))
        }
        session.set(code: nil)
        let factors = try confirmable(session, request)
        return page(confirmPage(session, request, intent: intent, factors: factors))
    }

    /// `POST /confirm/challenge`: sends the chosen factor's challenge, then its code page.
    func challengeConfirm(_ request: Request) throws -> Response {
        let (session, form, _) = try posted(request)
        guard session.isSignedIn else { return outOfStep(session, request) }
        let factors = try confirmable(session, request)
        guard let hint = factors.first(where: { $0.id == form["factor"] }) else { return outOfStep(session, request) }
        let client = trifactor(session, request)
        do {
            _ = try blocking({ try await client.stepUpChallenge(hint) })
        } catch {
            session.flash(
                Self.isSendLimit(error)
                    ? Self.cannotText(error, others: factors.filter { $0.id != hint.id }) : Self.sentence(error))
            return redirect("/confirm")
        }
        session.set(code: CodeChallenge(hint))
        return redirect("/confirm/code")
    }

    /// `GET /confirm/code`: the code page of confirming it's the customer.
    func showConfirmCode(_ request: Request) -> Response {
        let session = self.session(request).session
        guard let session, session.isSignedIn, let code = session.code else { return outOfStep(session, request) }
        let draft = session.draft(for: "/confirm/code", now: now())
        return page(
            confirmCodePage(session, request, code, intent: session.flows { $0.stepUp }, error: draft?.errors["code"]))
    }

    /// `POST /confirm/code`: a code that confirms it's the customer; too many wrong ones sign them out.
    func checkConfirmCode(_ request: Request) throws -> Response {
        let (session, form, cookie) = try posted(request)
        guard session.isSignedIn, var code = session.code else { return outOfStep(session, request) }
        let client = trifactor(session, request)
        let hint = code.hint
        do {
            _ = try blocking({ try await client.stepUp(hint, with: .code(form["code"] ?? "")) })
        } catch {
            guard
                let answer = codeRefused(
                    session, &code, error, page: "/confirm/code",
                    over: {
                        signOut(
                            session, cookie, request,
                            notice: "\($0) For your safety you are signed out: sign in again when you are ready.")
                    })
            else { throw error }
            return answer
        }
        return confirmed(session, request, cookie)
    }

    /// `POST /confirm/resend`: a new texted code for confirming.
    func resendConfirmCode(_ request: Request) throws -> Response {
        let (session, _, _) = try posted(request)
        guard session.isSignedIn, let code = session.code, code.isTexted else { return outOfStep(session, request) }
        let client = trifactor(session, request)
        do {
            _ = try blocking({ try await client.stepUpChallenge(code.hint) })
            session.set(code: CodeChallenge(code.hint))
            session.flash(Self.newCodeSent(code.hint))
        } catch {
            let others = (try? confirmable(session, request))?.filter { $0.id != code.hint.id } ?? []
            session.flash(Self.isSendLimit(error) ? Self.cannotText(error, others: others) : Self.sentence(error))
        }
        return redirect("/confirm/code")
    }

    /// `POST /confirm/cancel`: drops the confirmation and the change it was for.
    func cancelConfirm(_ request: Request) throws -> Response {
        let (session, _, _) = try posted(request)
        session.flows { $0.stepUp = nil }
        session.set(code: nil)
        session.flash("Nothing was changed.")
        return redirect(currentStep(session) == "/accounts" ? "/settings" : currentStep(session))
    }

    /// Sends the customer to /confirm for `intent`: the page says why it asks, and once confirmed the bank does it.
    func stepUp(_ session: BankSession, _ intent: StepUpIntent) -> Response {
        session.flows { $0.stepUp = intent }
        session.set(code: nil)
        return redirect("/confirm")
    }

    /// Confirmed: a new cookie, then what the customer was doing (`StepUpIntent`), or the page they came back to.
    func confirmed(_ session: BankSession, _ request: Request, _ cookie: String?) -> Response {
        session.set(code: nil)
        session.confirm(now())
        let (fresh, _) = sessions.issue(replacing: cookie, carrying: session, secure: configuration.secure, now: now())
        let (intent, back) = session.flows { flows in
            defer {
                flows.stepUp = nil
                flows.comeBackTo = nil
            }
            return (flows.stepUp, flows.comeBackTo)
        }
        var next: Response
        switch intent {
        case nil: next = redirect(back ?? "/accounts")
        case .addAuthenticatorApp?: next = startTOTP(session, request)
        case .addPasskey?:
            session.flash("Confirmed. Now add your passkey: press “Add a passkey” and follow your browser.")
            next = redirect("/settings#h-passkeys")
        case .addMobile(let number)?: next = startPhoneSetup(session, request, number: number)
        case .newRecoveryCodes?: next = makeRecoveryCodes(session, request)
        case .removeFactor(let id, let name)?: next = removeFactor(session, request, id: id, name: name)
        case .changePassword?:
            session.flash("Confirmed. Now change your password.")
            next = redirect("/settings#h-password")
        }
        next.headers.append(("Set-Cookie", fresh.setCookie))
        return next
    }

    /// The customer's factors that can confirm a step-up here, the passkeys first (none at an IP address).
    func confirmable(_ session: BankSession, _ request: Request) throws -> [FactorHint] {
        let client = trifactor(session, request)
        let passkeys = Self.passkeysWork(request)
        let hints = try blocking({ try await client.factors() }).map(FactorHint.init).filter { hint in
            switch hint.kind {
            case .phone, .totp, .recoveryCode: true
            case .passkey: passkeys
            default: false
            }
        }
        return hints.filter { $0.kind == .passkey } + hints.filter { $0.kind != .passkey }
    }
}
