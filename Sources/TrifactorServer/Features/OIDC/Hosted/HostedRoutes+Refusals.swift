import Core
import Crypto
import Foundation
import HTTP
import WebUI

/// The second step's refusals in the user's words, and the device approval a page watches.
extension HostedRoutes {
    /// The sentence of an error the last POST redirected with (`error=` and its `left=` or `wait=`): errors come
    /// back through a GET (Post/Redirect/Get), so a reload never posts a wrong code again.
    static func errorSentence(_ query: [String: String], _ t: HostedText) -> String? {
        let wait = t.duration(clamped(query["wait"], to: 1...86_400) ?? 60)
        switch query["error"] {
        case "wrong":
            // The tries left from the first wrong code on: a count that appears only later reads as a surprise.
            if let left = clamped(query["left"], to: 0...100) {
                return t("code.wrong.left", ["left": t.number(left)])
            }
            return t("code.wrong")
        case "shape": return t("code.shape")
        case "empty": return t("code.empty")
        case "locked": return t("code.locked", ["wait": wait])
        case "frozen": return t("code.frozen")
        case "limit": return t("code.limit", ["wait": wait])
        case "unusable": return t("code.unusable")
        case "passkey": return t("code.passkey")
        default: return nil
        }
    }

    /// A failure as the query of the GET it redirects to.
    static func errorQuery(_ failure: SecondFactorFailure) -> String {
        switch failure {
        case .wrongProof(let remaining): "&error=wrong&left=\(remaining)"
        case .locked(let wait): "&error=locked&wait=\(wait)"
        case .frozen: "&error=frozen"
        case .limitExceeded: "&error=limit"
        // Nothing was typed yet: the way cannot be used (no SMS provider, the app's key unreadable), not a wrong code.
        case .unusable, .deliveryUnavailable, .totpUnavailable: "&error=unusable"
        default: "&error=wrong"
        }
    }

    /// The device's answer, watched by a page that reloads every 2 seconds while it waits.
    func awaitApproval(
        _ c: Context, _ request: Request, pending: String, factor f: SessionService.Hint, approval: String
    ) throws -> Response {
        var c = c
        let t = c.frame.text
        let id = ApprovalID(approval)
        let state = (try? secondFactors.push.state(id, pendingCredential: pending)) ?? "expired"
        if state == "approved" {
            let issued = try secondFactors.completeSignIn(
                pendingCredential: pending, factorID: f.factorID, answer: .approval(id),
                client: Self.audit(request, for: c.client, c.frame.text))
            c.flow.progress.authenticatedHere = true
            c.flow.progress.accountChosen = true
            return try advance(
                c, token: issued.token, request, unsaved: true,
                headers: signedIn(request, token: issued.token, session: issued.session))
        }
        let hints = (try? secondFactors.hints(pendingCredential: pending)) ?? []
        guard state == "pending" else {
            return factorForm(
                c, f, others: Self.usable(hints, stepUp: false, level: c.flow.request.requestedLevel), stepUp: false,
                sent: false,
                error: state == "denied" ? t("device.denied") : t("device.expired"))
        }
        let number = Self.clamped(request.query["number"], to: 10...99).map(String.init) ?? "?"
        c.frame.script = true
        let page = HostedPage.layout(
            t("device.title"), c.frame,
            [
                HostedPage.paragraph(t("device.pick", ["device": HostedPage.device(f.displayName, t)])),
                .element("p", ["class": "number", "aria-live": "polite"], [.text(number)]),
                HostedPage.paragraph(t("device.waiting"), class: "muted"),
                HostedPage.waitsForDevice(),
                otherWays(c, chosen: f, among: Self.usable(hints, stepUp: false, level: c.flow.request.requestedLevel)),
                cancelForm(c),
            ])
        return HostedPage.response(page, c.frame)
    }

    /// A refusal in the user's words.
    static func sentence(_ failure: SecondFactorFailure, _ t: HostedText) -> String {
        switch failure {
        case .wrongProof(let remaining):
            t("code.wrong.left", ["left": t.number(max(remaining, 0))])
        case .locked(let wait): t("code.locked", ["wait": t.duration(wait)])
        case .frozen: t("code.frozen")
        case .limitExceeded: t("code.limit_later")
        case .unusable, .deliveryUnavailable, .totpUnavailable: t("code.unusable")
        default: t("code.wrong")
        }
    }
}
