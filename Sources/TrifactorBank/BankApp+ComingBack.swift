import Foundation
import HTTP
import TrifactorKit

/// Coming back: after the idle time (5 minutes by default), or when the tab
/// was hidden that long, balances hide and the customer confirms with a
/// second factor again (a Trifactor step-up) before going on, as mobile
/// banks ask for Face ID again after the app was in the background.
extension BankApp {
    func addComingBack(_ router: inout Router) {
        route(&router, "GET", "/confirm") { [self] request in
            guard let session = self.session(request).session, case .signedIn = session.stage else { return redirect("/") }
            let client = trifactor(session, request)
            let factors = try blocking({ try await client.factors() }).map(FactorHint.init).filter(Self.confirmable)
            return page(Page.layout("Welcome back", session: session, devPhone: configuration.devPhone, notice: session.takeNotice(), [
                Page.paragraph("For your safety your balances are hidden after a while away. Confirm it's you to go on."),
                Page.form("/confirm/challenge", session, factors.map { Page.button(FactorLabel.of($0), name: "factor", value: $0.id, kind: "secondary") }),
            ]))
        }
        route(&router, "POST", "/confirm/challenge") { [self] request in
            let (session, form, _) = try posted(request)
            guard case .signedIn = session.stage else { return redirect("/") }
            let client = trifactor(session, request)
            guard let hint = try blocking({ try await client.factors() }).map(FactorHint.init).filter(Self.confirmable)
                .first(where: { $0.id == form["factor"] }) else { return redirect("/confirm") }
            do {
                _ = try blocking({ try await client.stepUpChallenge(hint) })
            } catch {
                session.flash(Self.sentence(error))
                return redirect("/confirm")
            }
            session.set(codeHint: hint)
            return page(confirmCodePage(session, hint, error: nil))
        }
        route(&router, "POST", "/confirm/code") { [self] request in
            let (session, form, cookie) = try posted(request)
            guard case .signedIn = session.stage, let hint = session.codeHint else { return redirect("/") }
            let client = trifactor(session, request)
            do {
                _ = try blocking({ try await client.stepUp(hint, with: .code(form["code"] ?? "")) })
            } catch let error as TrifactorError where error.problem?.code == .invalidCode {
                return page(confirmCodePage(session, hint, error: Self.wrongCode(error)), status: 400)
            }
            session.set(codeHint: nil)
            session.confirm(now())
            let (fresh, _) = sessions.issue(replacing: cookie, carrying: session, secure: configuration.secure, now: now())
            return redirect(session.takeReturnPath() ?? "/accounts", cookies: [fresh.setCookie])
        }
    }

    static func confirmable(_ hint: FactorHint) -> Bool {
        switch hint.kind {
        case .phone, .totp, .recoveryCode: true
        default: false
        }
    }

    func confirmCodePage(_ session: BankSession, _ hint: FactorHint, error: String?) -> HTML {
        let text: String
        switch hint.kind {
        case .phone(let masked): text = "We sent a code to \(masked)."
        case .recoveryCode: text = "Type one of your recovery codes."
        default: text = "Type the code from your authenticator app."
        }
        return Page.layout("Confirm it's you", session: session, devPhone: configuration.devPhone, [
            Page.paragraph(text),
            Page.form("/confirm/code", session, [
                Page.field("Code", name: "code", error: error, autocomplete: "one-time-code", autofocus: true),
                Page.button("Confirm"),
            ]),
        ])
    }
}
