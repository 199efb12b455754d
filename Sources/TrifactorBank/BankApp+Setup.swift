import Foundation
import HTTP
import Store
import TrifactorKit
import WebUI

/// Adding a mobile once signed in: a customer signed in with a password
/// alone adds it before anything else, and settings can turn codes by text
/// back on. The code page sends a new code and changes the number.
extension BankApp {
    /// The routes of adding a mobile once signed in: each HTTP method and path, and the handler that answers it.
    func addSetup(_ router: inout Router) {
        route(&router, "GET", "/setup/phone", showPhoneSetup)
        route(&router, "POST", "/setup/phone", sendPhoneSetupCode)
        route(&router, "GET", "/setup/phone/code", showPhoneSetupCode)
        route(&router, "POST", "/setup/phone/confirm", confirmPhoneSetup)
        route(&router, "POST", "/setup/phone/resend", resendPhoneSetupCode)
    }

    /// `GET /setup/phone`: the form that adds a mobile once signed in.
    func showPhoneSetup(_ request: Request) throws -> Response {
        let session = self.session(request).session
        guard let session, case .signedIn(let customer, _) = session.stage else { return outOfStep(session, request) }
        if !session.needsFactor { _ = try self.customer(request) }
        let phone = try database.read {
            try $0.queryOne("SELECT phone FROM bank_customers WHERE id = $1", [.text(customer)])?.text("phone")
        }
        let draft = session.draft(for: "/setup/phone", now: now())
        return page(
            Page.layout(
                "Add two-step verification", screen(session, request, notice: session.takeNotice(), tab: .settings),
                [
                    Page.paragraph(
                        session.needsFactor
                            ? "Your account has no second factor, so your balances stay hidden. Add your mobile: every sign-in and transfer will send it a code."
                            : "Add your mobile: sign-ins and transfers can then send it a code."),
                    Page.form(
                        "/setup/phone", session, class: "card stack",
                        [
                            Page.field(
                                "Mobile number", name: "phone", type: "tel", value: draft?["phone"] ?? phone,
                                error: draft?.errors["phone"], autocomplete: "tel"),
                            Page.button("Send me a code"),
                        ]),
                    session.needsFactor ? .empty : Page.link("Back to settings", "/settings"),
                ]))
    }

    /// `POST /setup/phone`: texts a code to the mobile being added.
    func sendPhoneSetupCode(_ request: Request) throws -> Response {
        let (session, form, _) = try posted(request)
        guard session.isSignedIn else { return outOfStep(session, request) }
        if !session.needsFactor { _ = try customer(request) }
        return startPhoneSetup(session, request, number: form["phone"] ?? "")
    }

    /// `GET /setup/phone/code`: the page for the code texted to the mobile being added.
    func showPhoneSetupCode(_ request: Request) -> Response {
        let session = self.session(request).session
        guard let session, session.isSignedIn, let setup = session.flows({ $0.phoneSetup }) else {
            return outOfStep(session, request)
        }
        let draft = session.draft(for: "/setup/phone/code", now: now())
        let usedUp = setup.tries >= Self.textedCodeTries
        var body: [HTML] = [Page.paragraph("We sent a code to \(setup.enrollment.maskedPhone ?? "your mobile").")]
        if usedUp {
            body.append(
                .element(
                    "p", ["class": "error", "role": "alert"],
                    [.text(draft?.errors["code"] ?? "That code no longer works: send a new code.")]))
        } else {
            body.append(codeForm("/setup/phone/confirm", session, error: draft?.errors["code"]))
        }
        body.append(
            Page.actions([
                Page.form(
                    "/setup/phone/resend", session,
                    [Page.button("Send a new code", kind: usedUp ? "primary" : "secondary")]),
                Page.link("Change the number", "/setup/phone"),
            ]))
        return page(
            Page.layout(
                "Confirm your mobile", screen(session, request, notice: session.takeNotice(), tab: .settings), body))
    }

    /// `POST /setup/phone/confirm`: the texted code adds the mobile.
    func confirmPhoneSetup(_ request: Request) throws -> Response {
        let (session, form, _) = try posted(request)
        guard session.isSignedIn, var setup = session.flows({ $0.phoneSetup }) else {
            return outOfStep(session, request)
        }
        let enrollment = setup.enrollment
        do {
            _ = try blocking({ try await enrollment.confirm(code: form["code"] ?? "", name: "Mobile") })
        } catch {
            let verdict = Self.verdict(error, tries: &setup.tries, texted: true)
            if case .again? = verdict {} else { setup.tries = max(setup.tries, Self.textedCodeTries) }
            session.flows { $0.phoneSetup = setup }
            switch verdict {
            case .again(let sentence)?, .newCode(let sentence)?, .over(let sentence)?:
                return back(to: "/setup/phone/code", session, FormDraft(errors: ["code": sentence]))
            case nil:
                throw error
            }
        }
        session.flows { $0.phoneSetup = nil }
        let wasNeeded = session.needsFactor
        session.set(needsFactor: false)
        session.flash(wasNeeded ? "Two-step verification is on." : "Codes by text message are on.")
        return redirect(wasNeeded ? "/accounts" : "/settings")
    }

    /// `POST /setup/phone/resend`: a new code texted to the mobile being added.
    func resendPhoneSetupCode(_ request: Request) throws -> Response {
        let (session, _, _) = try posted(request)
        guard session.isSignedIn, let setup = session.flows({ $0.phoneSetup }) else {
            return outOfStep(session, request)
        }
        return startPhoneSetup(session, request, number: setup.number, again: true)
    }

    /// Texts a code to `number` for adding it, then its code page. A change Trifactor wants a fresh second factor for
    /// goes through /confirm first and comes back here; a customer with no second factor whose password is too old signs
    /// in again; a refused number or a text that cannot be sent yet goes back to the form saying why.
    func startPhoneSetup(_ session: BankSession, _ request: Request, number: String, again: Bool = false) -> Response {
        let client = trifactor(session, request)
        do {
            let enrollment = try blocking({ try await client.enrollPhone(number, country: "GB") })
            session.flows { $0.phoneSetup = PhoneSetup(number: number, enrollment: enrollment) }
            if again {
                session.flash("We sent a new code to \(enrollment.maskedPhone ?? number). The old one no longer works.")
            }
            return redirect("/setup/phone/code")
        } catch let error as TrifactorError
            where [.secondFactorRequired, .reauthenticationRequired].contains(error.problem?.code)
        {
            if session.needsFactor {
                return signOut(
                    session, SessionCookie.value(in: request.header("cookie")), request,
                    notice: "For your safety, sign in again with your password to add your mobile.")
            }
            return stepUp(session, .addMobile(number: number))
        } catch {
            let sentence: String
            if let field = (error as? TrifactorError)?.problem?.invalidFields.first {
                sentence = Self.fieldSentence(field)
            } else if Self.isSendLimit(error) {
                sentence = Self.cannotText(error, others: [])
            } else if (error as? TrifactorError)?.problem?.code == "second_factor_exists" {
                sentence = "This mobile is one of your second factors already."
            } else {
                sentence = Self.sentence(error)
            }
            session.flows { $0.phoneSetup = nil }
            return back(to: "/setup/phone", session, FormDraft(values: ["phone": number], errors: ["phone": sentence]))
        }
    }
}
