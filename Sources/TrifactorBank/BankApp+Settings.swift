import Foundation
import HTTP
import TrifactorKit
import WebUI

/// Settings: the customer's second factors (add an authenticator app or a
/// passkey, rename, remove after a confirmation), how to link a device,
/// recovery codes, the password, and where they are signed in. A change
/// Trifactor guards with a recent second factor goes through /confirm first,
/// which says why it asks, and is carried out once confirmed.
extension BankApp {
    /// The routes of settings: each HTTP method and path, and the handler that answers it.
    func addSettings(_ router: inout Router) {
        route(&router, "GET", "/settings", showSettings)
        route(&router, "POST", "/settings/totp", beginAuthenticatorApp)
        route(&router, "GET", "/settings/factors/:id/remove", showRemoveFactor)
        route(&router, "POST", "/settings/factors/remove", removeChosenFactor)
        route(&router, "POST", "/settings/password", changePassword)
        route(&router, "POST", "/settings/factors/rename", renameFactor)
        route(&router, "POST", "/settings/sessions/revoke", revokeSession)
        route(&router, "POST", "/settings/sessions/revoke-others", revokeOtherSessions)
    }

    /// `GET /settings`: the customer's second factors, password, sessions and this browser.
    func showSettings(_ request: Request) throws -> Response {
        let (session, customer) = try customer(request)
        let client = trifactor(session, request)
        let factors = try blocking({ try await client.factors() })
        let others = try blocking({ try await client.sessions() })
        return page(settingsPage(session, request, customer: customer, factors: factors, sessions: others))
    }

    /// `POST /settings/totp`: starts adding an authenticator app (or confirming it's the customer first).
    func beginAuthenticatorApp(_ request: Request) throws -> Response {
        _ = try posted(request)
        let (session, _) = try customer(request)
        return startTOTP(session, request)
    }

    /// `GET /settings/factors/:id/remove`: asks before a second factor is removed.
    func showRemoveFactor(_ request: Request) throws -> Response {
        let (session, _) = try customer(request)
        let client = trifactor(session, request)
        let factors = try blocking({ try await client.factors() })
        guard let factor = factors.first(where: { $0.enrollmentID == request.parameters["id"] }) else {
            session.flash("That second factor is no longer there.")
            return redirect("/settings")
        }
        return page(removePage(session, request, factor, last: Self.isLastFactor(factor, of: factors)))
    }

    /// `POST /settings/factors/remove`: removes the second factor the form names.
    func removeChosenFactor(_ request: Request) throws -> Response {
        let (_, form, _) = try posted(request)
        let (session, _) = try customer(request)
        return removeFactor(session, request, id: form["factor"] ?? "", name: form["name"] ?? "this second factor")
    }

    /// `POST /settings/password`: a new password, the current one proven.
    func changePassword(_ request: Request) throws -> Response {
        let (_, form, _) = try posted(request)
        let (session, _) = try customer(request)
        let client = trifactor(session, request)
        let current = form.raw("current_password") ?? ""
        let replacement = form.raw("new_password") ?? ""
        do {
            try blocking({ try await client.changePassword(current: current, new: replacement) })
        } catch let error as TrifactorError where !(error.problem?.invalidFields.isEmpty ?? true) {
            let sentences = (error.problem?.invalidFields ?? []).map {
                "\($0.name == "current_password" ? "Current password" : "New password") \($0.reason)."
            }
            session.flash(sentences.joined(separator: " "))
            return redirect("/settings#h-password")
        } catch let error as TrifactorError where Self.wantsStepUp(error) {
            return stepUp(session, .changePassword)
        } catch {
            session.flash(Self.sentence(error) + " Nothing was changed.")
            return redirect("/settings#h-password")
        }
        session.flash("Your password is changed, and you are signed out everywhere else.")
        return redirect("/settings")
    }

    /// `POST /settings/factors/rename`: a second factor's new name.
    func renameFactor(_ request: Request) throws -> Response {
        let (_, form, _) = try posted(request)
        let (session, _) = try customer(request)
        let client = trifactor(session, request)
        do {
            let renamed = try blocking({ try await client.renameFactor(form["factor"] ?? "", to: form["name"] ?? "") })
            session.flash("Renamed to \(renamed.displayName).")
        } catch {
            session.flash(
                (error as? TrifactorError)?.problem?.invalidFields.first.map(Self.fieldSentence) ?? Self.sentence(error)
            )
        }
        return redirect("/settings")
    }

    /// `POST /settings/sessions/revoke`: signs one of the customer's sessions out.
    func revokeSession(_ request: Request) throws -> Response {
        let (_, form, _) = try posted(request)
        let (session, _) = try customer(request)
        let client = trifactor(session, request)
        try? blocking({ try await client.revokeSession(form["session"] ?? "") })
        session.flash("That session is signed out.")
        return redirect("/settings")
    }

    /// `POST /settings/sessions/revoke-others`: signs every other session of the customer out.
    func revokeOtherSessions(_ request: Request) throws -> Response {
        _ = try posted(request)
        let (session, _) = try customer(request)
        let client = trifactor(session, request)
        let all = try blocking({ try await client.sessions() })
        for other in all where !other.current { try? blocking({ try await client.revokeSession(other.id) }) }
        session.flash("You are signed out everywhere else.")
        return redirect("/settings")
    }

    /// Whether Trifactor wants a fresh second factor (or password) for the change.
    static func wantsStepUp(_ error: any Error) -> Bool {
        [.secondFactorRequired, .reauthenticationRequired].contains((error as? TrifactorError)?.problem?.code)
    }

    /// Whether `factor` is the customer's only second step (recovery codes alone are none: they go with it).
    static func isLastFactor(_ factor: EnrolledFactor, of factors: [EnrolledFactor]) -> Bool {
        factor.kind != "recovery_code"
            && !factors.contains { $0.enrollmentID != factor.enrollmentID && $0.kind != "recovery_code" }
    }

    /// Carries out a settings change: through /confirm for `intent` when Trifactor wants a fresh second factor first,
    /// else a refusal is said on the settings page (nothing was changed).
    func change(_ session: BankSession, _ intent: StepUpIntent, _ body: () throws -> Response) -> Response {
        do {
            return try body()
        } catch  where Self.wantsStepUp(error) {
            return stepUp(session, intent)
        } catch {
            session.flash(Self.sentence(error) + " Nothing was changed.")
            return redirect("/settings")
        }
    }

    /// Removes factor `id` (through /confirm when Trifactor wants a fresh second factor); without any second step left,
    /// two-step verification is off and balances hide until the customer adds one again.
    func removeFactor(_ session: BankSession, _ request: Request, id: String, name: String) -> Response {
        let client = trifactor(session, request)
        return change(session, .removeFactor(id: id, name: name)) {
            try blocking({ try await client.removeFactor(id) })
            let left = (try? blocking({ try await client.factors() })) ?? []
            if !left.contains(where: { $0.kind != "recovery_code" }) {
                session.set(needsFactor: true)
                session.flash(
                    "Removed \(name). Two-step verification is off, so your balances stay hidden until you add a second step again."
                )
            } else {
                session.flash("Removed \(name).")
            }
            return redirect("/settings")
        }
    }
}
