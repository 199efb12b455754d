import Foundation
import HTTP
import TrifactorKit
import WebUI

/// The second step of a forgotten password: one of the customer's second
/// factors proves the reset (a code typed with the new password, a device's
/// approval or a passkey after it), then the password changes.
extension BankApp {
    /// `GET /forgot/factor`: the customer's second factors, one to prove for the reset.
    func showResetFactor(_ request: Request) -> Response {
        let session = self.session(request).session
        guard let session, let flow = liveReset(session), let reset = flow.reset, resetStep(flow) == "/forgot/factor"
        else {
            return outOfStep(session, request)
        }
        return page(resetFactorPage(session, request, reset, notice: session.takeNotice()))
    }

    /// `POST /forgot/another`: back to the choice of second factor.
    func resetAnotherWay(_ request: Request) throws -> Response {
        // "Use another way": the factor chosen before is left (a password typed for it is forgotten).
        let (session, _, _) = try posted(request)
        guard let flow = liveReset(session), flow.reset?.secondFactorRequired == true else {
            return outOfStep(session, request)
        }
        _ = updateReset(session, flow.id) {
            $0.factor = nil
            $0.push = nil
            $0.newPassword = nil
        }
        return redirect("/forgot/factor")
    }

    /// `POST /forgot/challenge`: sends the chosen factor's challenge (a device or passkey comes after the new password).
    func challengeResetFactor(_ request: Request) throws -> Response {
        let (session, form, _) = try posted(request)
        guard let flow = liveReset(session), let reset = flow.reset, resetStep(flow) == "/forgot/factor",
            let hint = reset.hints.first(where: { $0.id == form["factor"] })
        else { return outOfStep(session, request) }
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
        guard updateReset(session, flow.id, { $0.factor = CodeChallenge(hint) }) != nil else {
            return outOfStep(session, request)
        }
        return redirect("/forgot/new")
    }

    /// `GET /forgot/new`: the new password (and the factor's code) form.
    func showNewPassword(_ request: Request) -> Response {
        let session = self.session(request).session
        guard let session, let flow = liveReset(session), resetStep(flow) == "/forgot/new" else {
            return outOfStep(session, request)
        }
        let draft = session.draft(for: "/forgot/new", now: now())
        return page(resetNewPage(session, request, flow, draft: draft, notice: session.takeNotice()))
    }

    /// `POST /forgot/new`: the new password with the factor's proof, or on to the device's approval or the passkey.
    func setNewPassword(_ request: Request) throws -> Response {
        let (session, form, _) = try posted(request)
        // The page names the factor it was for: one chosen since in another tab makes it out of date.
        guard let flow = liveReset(session), let reset = flow.reset, resetStep(flow) == "/forgot/new",
            (form["factor"] ?? "") == (flow.factor?.hint.id ?? "")
        else { return outOfStep(session, request) }
        let password = form.raw("new_password") ?? ""
        guard !password.isEmpty else {
            return back(to: "/forgot/new", session, FormDraft(errors: ["new_password": "Choose a new password."]))
        }
        guard let factor = flow.factor else {
            return resetAnswered(session, flow) { try blocking({ try await reset.complete(newPassword: password) }) }
        }
        switch factor.hint.kind {
        case .device:
            return approveReset(session, flow, reset, factor.hint, password: password)
        case .passkey:
            guard updateReset(session, flow.id, { $0.newPassword = password }) != nil else {
                return outOfStep(session, request)
            }
            return redirect("/forgot/passkey")
        default:
            let code = (form["code"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            guard !code.isEmpty else {
                return back(
                    to: "/forgot/new", session,
                    FormDraft(errors: ["code": "Enter the code.", "new_password": "Type the new password again."]))
            }
            return resetAnswered(session, flow, code: code) {
                try blocking({
                    try await reset.complete(newPassword: password, proving: factor.hint, with: .code(code))
                })
            }
        }
    }

    /// `POST /forgot/text`: a new texted code for the reset.
    func resendResetText(_ request: Request) throws -> Response {
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

    /// `POST /forgot/call`: the reset's code read out by a call.
    func callForReset(_ request: Request) throws -> Response {
        let (session, _, _) = try posted(request)
        guard let flow = liveReset(session), let reset = flow.reset, let code = flow.factor,
            case .phone(let masked) = code.hint.kind
        else {
            return outOfStep(session, request)
        }
        return callInstead(
            session, masked: masked, others: reset.hints.filter { $0.id != code.hint.id }, page: "/forgot/new",
            call: { try blocking({ try await reset.callInstead(code.hint) }) }, otherwise: { endReset(session, $0) })
    }

    /// `GET /forgot/push`: waits for the device's approval, then completes the reset.
    func showResetApproval(_ request: Request) -> Response {
        let session = self.session(request).session
        guard let session, let flow = liveReset(session), resetStep(flow) == "/forgot/push", let reset = flow.reset,
            let push = flow.push,
            let hint = flow.factor?.hint, let password = flow.newPassword
        else { return outOfStep(session, request) }
        do {
            switch try blocking({ try await push.state() }) {
            case .pending:
                return page(approvalPage(session, request, number: push.number, cancel: "/forgot/cancel"))
            case .approved:
                // The password leaves the session now; the approval stays good if it is refused, so the customer
                // types another on the new-password page and no new push is needed.
                _ = updateReset(session, flow.id) { $0.newPassword = nil }
                return resetAnswered(session, flow) {
                    try blocking({
                        try await reset.complete(newPassword: password, proving: hint, with: .approval(push))
                    })
                }
            case .denied:
                return endReset(session, TrifactorError.approvalDenied)
            case .expired:
                _ = updateReset(session, flow.id) {
                    $0.push = nil
                    $0.newPassword = nil
                }
                session.flash(
                    "The approval on your device took too long. Type the new password again to send a new one, or use another way."
                )
                return redirect("/forgot/new")
            }
        } catch {
            return endReset(session, error)
        }
    }

    /// `GET /forgot/passkey`: the page that asks the browser for the passkey.
    func showResetPasskey(_ request: Request) -> Response {
        let session = self.session(request).session
        guard let session, let flow = liveReset(session), resetStep(flow) == "/forgot/passkey" else {
            return outOfStep(session, request)
        }
        return page(resetPasskeyPage(session, request, notice: session.takeNotice()))
    }

    /// `POST /forgot/passkey/options`: the request options of the passkey that proves the reset.
    func resetPasskeyOptions(_ request: Request) throws -> Response {
        let (session, _) = try postedJSON(request)
        guard let flow = liveReset(session), let reset = flow.reset, resetStep(flow) == "/forgot/passkey",
            let hint = flow.factor?.hint
        else {
            return jsonError(409, "This reset is over or changed in another tab. Reload the page.")
        }
        do {
            guard case .passkey(let options) = try blocking({ try await reset.challenge(hint) }) else {
                return jsonError(409, "That is not a passkey.")
            }
            return Response.json(RequestBody(options: options))
        } catch let error as TrifactorError
            where error.problem.map({ $0.status < 500 && $0.code != .rateLimited }) ?? false
        {
            return jsonRedirect(endReset(session, error))
        } catch {
            return jsonRefusal(error)
        }
    }

    /// `POST /forgot/passkey`: the passkey's assertion completes the reset.
    func resetWithPasskey(_ request: Request) throws -> Response {
        let (session, _) = try postedJSON(request)
        guard let flow = liveReset(session), let reset = flow.reset, resetStep(flow) == "/forgot/passkey",
            let factor = flow.factor,
            let password = flow.newPassword
        else {
            return jsonError(409, "This reset is over or changed in another tab. Reload the page.")
        }
        guard let body = try? WireJSON.sharedDecoder.decode(AssertionBody.self, from: Data(request.body)) else {
            return jsonError(400, "That passkey could not be read. Try again.")
        }
        do {
            try blocking({
                try await reset.complete(newPassword: password, proving: factor.hint, with: .assertion(body.assertion))
            })
        } catch let error as TrifactorError where error.problem?.code == .invalidCode {
            var counted = factor
            if case .over(let sentence)? = Self.verdict(error, tries: &counted.wrongTries, texted: false) {
                return jsonRedirect(
                    endReset(
                        session, nil,
                        saying: sentence.replacingOccurrences(
                            of: "That code is wrong", with: "That passkey was not accepted")
                            + " The reset was cancelled and your password is unchanged."))
            }
            return jsonError(400, Self.passkeyRefused)
        } catch {
            if (error as? TrifactorError)?.problem?.invalidFields.contains(where: { $0.name == "new_password" }) == true
            {
                _ = updateReset(session, flow.id) { $0.newPassword = nil }
            }
            return jsonRedirect(resetRefused(session, error, factor: factor))
        }
        return jsonRedirect(resetDone(session, flow))
    }
}
