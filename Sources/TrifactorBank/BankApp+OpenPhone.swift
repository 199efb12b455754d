import Foundation
import HTTP
import Phone
import TrifactorKit
import WebUI

/// The mobile step of opening an account: the texted code, "Send a new
/// code" (a new enrollment: Trifactor ends a code after three wrong tries
/// and an enrollment after five), "Change the number" and "Start again".
/// Trifactor wants the password proven within five minutes to add a first
/// factor, so a slow customer is signed in again with the opening's password.
extension BankApp {

    /// `GET /open/phone`: the page for the code texted to a new customer's mobile.
    func showOpeningPhone(_ request: Request) -> Response {
        let session = self.session(request).session
        guard let session, let opening = session.flows({ $0.opening }), opening.emailVerified else {
            return outOfStep(session, request)
        }
        let draft = session.draft(for: "/open/phone", now: now())
        return page(openPhonePage(session, request, opening, draft: draft, notice: session.takeNotice()))
    }

    /// `POST /open/phone`: the texted code enrolls the mobile, and the new customer is signed in.
    func confirmOpeningPhone(_ request: Request) throws -> Response {
        let (session, form, _) = try posted(request)
        guard var opening = session.flows({ $0.opening }), let enrollment = opening.enrollment else {
            return outOfStep(session, request)
        }
        let client = trifactor(session, request)
        do {
            _ = try freshly(opening, client) {
                try blocking({ try await enrollment.confirm(code: form["code"] ?? "", name: "Mobile") })
            }
        } catch {
            let verdict = Self.verdict(error, tries: &opening.phoneTries, texted: true)
            if case .newCode? = verdict { opening.phoneTries = max(opening.phoneTries, Self.textedCodeTries) }
            if case .over? = verdict { opening.phoneTries = max(opening.phoneTries, Self.textedCodeTries) }
            session.flows { $0.opening = opening }
            switch verdict {
            case .again(let sentence)?, .newCode(let sentence)?, .over(let sentence)?:
                return back(to: "/open/phone", session, FormDraft(errors: ["code": sentence]))
            case nil:
                return back(to: "/open/phone", session, FormDraft(errors: ["code": Self.sentence(error)]))
            }
        }
        try createCustomer(opening, update: true)
        session.flows { $0.opening = nil }
        session.flash("Welcome to Trifactor Bank, \(opening.name). Your accounts are open.")
        // The mobile is confirmed: the browser is recognised as the new customer's, like after a second factor.
        return try finishSignIn(session, email: opening.email, request: request, next: "/accounts")
    }

    /// `POST /open/phone/resend`: a new enrollment, so a new texted code.
    func resendOpeningText(_ request: Request) throws -> Response {
        let (session, _, _) = try posted(request)
        guard let opening = session.flows({ $0.opening }), opening.emailVerified else {
            return outOfStep(session, request)
        }
        return sendOpeningText(session, request, again: true)
    }

    /// `POST /open/phone/number`: another mobile number, and a code texted to it.
    func changeOpeningNumber(_ request: Request) throws -> Response {
        let (session, form, _) = try posted(request)
        guard var opening = session.flows({ $0.opening }), opening.emailVerified else {
            return outOfStep(session, request)
        }
        var errors: [String: String] = [:]
        guard let number = Self.mobile(form["phone"] ?? "", errors: &errors) else {
            return back(to: "/open/phone", session, FormDraft(form, keeping: ["phone"], errors: errors))
        }
        opening.phone = number.e164
        session.flows { $0.opening = opening }
        try createCustomer(opening, update: true)
        return sendOpeningText(session, request, again: true)
    }

    /// Texts a code to the opening's mobile (a new enrollment each time, the old code dead) and goes to the mobile
    /// step, which says why when no text could be sent.
    func sendOpeningText(_ session: BankSession, _ request: Request, again: Bool = false, cookies: [String] = [])
        -> Response
    {
        guard var opening = session.flows({ $0.opening }) else { return outOfStep(session, request) }
        let client = trifactor(session, request)
        let phone = opening.phone
        do {
            opening.enrollment = try freshly(opening, client) { try blocking({ try await client.enrollPhone(phone) }) }
            opening.phoneTries = 0
            opening.textRefused = nil
            if again, let masked = opening.enrollment?.maskedPhone {
                session.flash("We sent a new code to \(masked). The old one no longer works.")
            }
        } catch {
            opening.enrollment = nil
            opening.textRefused = Self.isSendLimit(error) ? Self.cannotText(error, others: []) : Self.sentence(error)
        }
        session.flows { $0.opening = opening }
        return redirect("/open/phone", cookies: cookies)
    }

    /// Runs `call` for an account being opened, signing in again with its password and trying once more when Trifactor
    /// wants the password proven again (more than five minutes since) or the session is gone.
    func freshly<T>(_ opening: Opening, _ client: TrifactorClient, _ call: () throws -> T) throws -> T {
        do {
            return try call()
        } catch let error as TrifactorError where Self.wantsPasswordAgain(error) {
            let (email, password) = (opening.email, opening.password)
            guard case .signedIn = try blocking({ try await client.signIn(email: email, password: password) }) else {
                throw error
            }
            return try call()
        }
    }

    static func wantsPasswordAgain(_ error: TrifactorError) -> Bool {
        if case .notSignedIn = error { return true }
        return [.reauthenticationRequired, .unauthenticated, .sessionExpired].contains(error.problem?.code)
    }
}
