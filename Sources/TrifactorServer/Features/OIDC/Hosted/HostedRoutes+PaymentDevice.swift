import API
import Core
import Foundation
import HTTP
import WebUI

/// A payment approved on the customer's device: the payment pushed to it (the device shows every detail and signs
/// their hash with its decision and the number the page shows), the page that waits for it, and what its answer
/// does. The device's approval is kept apart from a text's or passkey's, so looking at another way never ends it;
/// whichever approves first stands.
extension HostedRoutes {
    /// Where a payment pushed to a device stands.
    enum Pushed {
        /// Approved: the flow went on.
        case answer(Response)
        /// Waiting for the device, which shows this number among three.
        case waiting(Int)
        /// Declined, expired or refused: this sentence, and the way to send it again.
        case again(String)
    }

    /// The device's answer to the flow's push: an approval approves the payment (and the flow goes on); a denial or
    /// an expiry is said, and the push forgotten so that the page can send a new one.
    func pushed(_ c: inout Context, _ details: AuthorizationDetails, _ caller: Caller, _ request: Request)
        throws -> Pushed
    {
        let t = c.frame.text
        guard let approval = c.flow.progress.detailsPush.map(ApprovalID.init),
            let id = c.flow.progress.detailsPushAuthorization.map(AuthorizationID.init)
        else { return .again(t("device.expired")) }
        let sentence: String
        let action = details.action(client: c.client.id)
        switch try authorizations.pushState(approval, of: id, action: action) {
        case "pending":
            return .waiting(c.flow.progress.detailsNumber ?? 0)
        case "approved":
            do {
                try authorizations.approve(
                    id, approval: approval, by: caller, client: Self.audit(request, for: c.client, t))
                // The device's approval is the flow's now (the token endpoint spends it); a text's or passkey's
                // started meanwhile ends.
                if let other = c.flow.progress.detailsAuthorization, other != id.raw {
                    try authorizations.withdraw(AuthorizationID(other), action: action)
                }
                c.flow.progress.detailsAuthorization = id.raw
                c.flow.progress.detailsFactor = c.flow.progress.detailsPushFactor
                c.flow.progress.detailsApproved = true
                c.flow.progress.detailsPush = nil
                return .answer(
                    try advance(c, token: HostedCookies.value(cookies.session, in: request), request, unsaved: true))
            } catch AuthorizationFailure.notFound {
                c.flow.progress.detailsPushAuthorization = nil
                sentence = t("payment.ended")
            } catch SecondFactorFailure.invalidCode {
                // Approved just as it expired (an approval is spent only while it lives): no code was typed here.
                sentence = t("device.expired")
            } catch let failure as SecondFactorFailure {
                sentence = Self.sentence(failure, t)
            }
        case "denied":
            // The device declined (or picked a wrong number): that approval is void, a new one starts on "Send".
            c.flow.progress.detailsPushAuthorization = nil
            sentence = t("payment.device.denied")
        default:
            sentence = t("device.expired")
        }
        c.flow.progress.detailsPush = nil
        c.flow.progress.detailsNumber = nil
        try flows.save(c.flow)
        return .again(sentence)
    }

    /// The payment and the number to pick on the device; the page waits (`HostedPage.waitsForDevice`) until it answers.
    func waiting(
        _ c: Context, _ details: AuthorizationDetails, device: String, number: Int, chosen: SessionService.Hint,
        among hints: [SessionService.Hint]
    ) -> Response {
        let t = c.frame.text
        var c = c
        c.frame.footer = t("footer.paying", ["client": c.client.name, "brand": brand])
        c.frame.script = true
        return HostedPage.response(
            HostedPage.layout(
                t("payment.title"), c.frame, notice: t("payment.notice", ["client": c.client.name]),
                [
                    statement(details, t),
                    HostedPage.paragraph(t("device.pick", ["device": device])),
                    .element("p", ["class": "number", "aria-live": "polite"], [.text(String(number))]),
                    HostedPage.paragraph(t("device.waiting"), class: "muted"),
                    HostedPage.waitsForDevice(),
                    otherWays(c, chosen: chosen, among: hints, path: "/authorize/payment"),
                    cancelForm(c),
                ]), c.frame)
    }

    /// The device's approval of the payment, pushed to device `f` (again: the running one, when it is this
    /// device's and still pending; a new one otherwise), with who asks for it. Kept apart from a text's or passkey's.
    func devicePush(
        _ c: inout Context, _ f: SessionService.Hint, _ details: AuthorizationDetails, _ caller: Caller,
        _ audit: AuditContext
    ) throws -> AuthorizationService.Created {
        let action = details.action(client: c.client.id)
        let message = "\(c.client.name): \(AuthorizationService.summary(action))"
        var created: AuthorizationService.Created?
        if let id = c.flow.progress.detailsPushAuthorization, c.flow.progress.detailsPushFactor == f.factorID.raw {
            do {
                created = try authorizations.resend(
                    AuthorizationID(id), action: action, by: caller, client: audit, push: message)
            } catch AuthorizationFailure.notFound, AuthorizationFailure.mismatch {
                // Expired or ended: a new one below.
            }
        }
        let pushed =
            try created
            ?? authorizations.create(action, factorID: f.factorID, by: caller, client: audit, push: message)
        c.flow.progress.detailsPushAuthorization = pushed.id.raw
        c.flow.progress.detailsPushFactor = f.factorID.raw
        c.flow.progress.detailsPush = pushed.pushed?.id.raw
        c.flow.progress.detailsNumber = pushed.pushed?.number
        try flows.save(c.flow)
        return pushed
    }

    /// The state of the flow's push to the device (`pending`, `approved`, `denied`, `expired`); nil when there is none.
    func devicePushState(_ c: Context) throws -> String? {
        guard let push = c.flow.progress.detailsPush, let id = c.flow.progress.detailsPushAuthorization,
            let details = c.flow.request.authorizationDetails
        else { return nil }
        return try authorizations.pushState(
            ApprovalID(push), of: AuthorizationID(id), action: details.action(client: c.client.id))
    }

    /// When the device approved the payment (whatever the page shows now): the approval is spent and the flow goes
    /// on; nil otherwise.
    func approvedOnDevice(
        _ c: inout Context, _ details: AuthorizationDetails, _ caller: Caller, _ request: Request
    ) throws -> Response? {
        guard try devicePushState(c) == "approved",
            case .answer(let response) = try pushed(&c, details, caller, request)
        else { return nil }
        return response
    }
}
