import Core
import Crypto
import Foundation
import HTTP
import WebUI

/// The second step's refusals in the user's words, and the device approval a page watches.
extension HostedRoutes {
    /// The sentence of an error the last POST redirected with (`error=` and its `left=` or `wait=`): errors come
    /// back through a GET (Post/Redirect/Get), so a reload never posts a wrong code again.
    static func errorSentence(_ query: [String: String]) -> String? {
        let wait = clamped(query["wait"], to: 1...86_400) ?? 60
        switch query["error"] {
        case "wrong":
            if let left = clamped(query["left"], to: 0...100), left <= 3 {
                return "That code did not work. \(left) more \(left == 1 ? "try" : "tries") before this sign-in stops."
            }
            return "That code did not work. Check it and try again."
        case "shape": return "That is not a code: type the 6 digits (or a recovery code) as shown, spaces are fine."
        case "empty": return "Enter the code."
        case "locked": return "Too many wrong codes. Wait \(duration(wait)), then try again."
        case "frozen": return "Your second step is locked after too many wrong codes. Contact support to unlock it."
        case "limit": return "You asked for several codes. Wait \(duration(wait)) before asking for another."
        case "unusable": return "This way cannot be used now. Choose another way below."
        case "passkey": return "That passkey did not answer. Try again, or use another way below."
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
        case .unusable: "&error=unusable"
        default: "&error=wrong"
        }
    }

    /// The device's answer, watched by a page that reloads every 2 seconds while it waits.
    func awaitApproval(
        _ c: Context, _ request: Request, pending: String, factor f: SessionService.Hint, approval: String
    ) throws -> Response {
        var c = c
        let id = ApprovalID(approval)
        let state = (try? secondFactors.push.state(id, pendingCredential: pending)) ?? "expired"
        if state == "approved" {
            let issued = try secondFactors.completeSignIn(
                pendingCredential: pending, factorID: f.factorID, answer: .approval(id),
                client: Self.audit(request, for: c.client))
            c.flow.progress.authenticatedHere = true
            c.flow.progress.accountChosen = true
            try flows.save(c.flow)
            return try advance(
                c, token: issued.token, request,
                headers: [cookies.set(cookies.session, issued.token), cookies.clear(cookies.pending)])
        }
        let hints = (try? secondFactors.hints(pendingCredential: pending)) ?? []
        guard state == "pending" else {
            return factorForm(
                c, f, others: Self.usable(hints, stepUp: false, level: c.flow.request.requestedLevel), stepUp: false,
                sent: false,
                error: state == "denied"
                    ? "The sign-in was denied on your device. If that was not you, change your password."
                    : "The request to your device expired. Send it again or use another way.")
        }
        let number = Self.clamped(request.query["number"], to: 10...99).map(String.init) ?? "?"
        let page = HostedPage.layout(
            "Approve on your device", c.frame,
            [
                HostedPage.paragraph(
                    "Open \(f.displayName ?? "your device"), check the request, and pick this number:"),
                .element("p", ["class": "number", "aria-live": "polite"], [.text(number)]),
                HostedPage.paragraph("This page moves on by itself once you approve.", class: "muted"),
                .element("meta", ["http-equiv": "refresh", "content": "2"]),
                otherWays(c, chosen: f, among: Self.usable(hints, stepUp: false, level: c.flow.request.requestedLevel)),
                cancelForm(c),
            ])
        return HostedPage.response(page, c.frame)
    }

    /// A refusal in the user's words.
    static func sentence(_ failure: SecondFactorFailure) -> String {
        switch failure {
        case .wrongProof(let remaining):
            remaining <= 3
                ? "That code did not work. \(remaining) more \(remaining == 1 ? "try" : "tries") before this sign-in stops."
                : "That code did not work. Check it and try again."
        case .locked(let wait): "Too many wrong codes. Wait \(duration(wait)), then try again."
        case .frozen: "Your second step is locked after too many wrong codes. Contact support to unlock it."
        case .limitExceeded: "You asked for several codes. Wait a few minutes before asking for another."
        case .unusable: "This way cannot be used now. Choose another way below."
        default: "That code did not work. Check it and try again."
        }
    }
}
