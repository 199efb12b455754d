import Core
import Crypto
import Foundation
import HTTP
import WebUI

/// The device authorization grant's pages (RFC 8628 §3.3): the user types the code a device shows, signs in with the
/// hosted sign-in (the same pages and session as `/authorize`), and approves or denies the device on a page that
/// names its client and what it asks for, every time (§5.4: a code someone sent you must not pass unseen).
extension HostedRoutes {
    /// Where a device's sign-in goes once the user is signed in.
    static let deviceConfirmation = "/device/confirm"

    /// The device grant's service, on the provider's own dependencies.
    var devices: DeviceFlowService {
        DeviceFlowService(
            tokens: TokenService(
                transactions: flows.transactions, clock: flows.clock, random: flows.random, minter: minter,
                policies: sessions.policies))
    }

    func registerDevice(on router: inout Router) {
        router.add("GET", "/device", execution: .database, page(deviceEntryPage))
        router.add("POST", "/device", execution: .database, page(deviceEntered))
        router.add("GET", Self.deviceConfirmation, execution: .database, page(deviceConfirmationPage))
        router.add("POST", Self.deviceConfirmation, execution: .database, page(deviceDecided))
        router.add("GET", "/device/done", execution: .database, page(deviceDone))
    }

    /// `GET /device[?user_code=…]`: the code field, filled in from the QR code's address (§3.3.1).
    func deviceEntryPage(_ request: Request) throws -> Response {
        let t = texts(request)
        let notice = request.query["error"] == nil ? nil : t("activate.cancelled")
        return deviceEntry(request, typed: request.query["user_code"], notice: notice)
    }

    /// The code form; `error` under the field (the page answers `status` then).
    private func deviceEntry(
        _ request: Request, typed: String?, error: String? = nil, notice: String? = nil, status: Int = 200
    ) -> Response {
        let t = texts(request)
        let (browser, headers) = browserCookie(request)
        let frame = HostedPage.Frame(text: t, brand: brand, footer: t("footer.sign_in", ["brand": brand]))
        let shown = typed.map { UserCode.normalize($0).map(UserCode.display) ?? String($0.prefix(16)) }
        let page = HostedPage.layout(
            t("activate.title"), frame, notice: notice,
            [
                HostedPage.paragraph(t("activate.body")),
                .element(
                    "form", ["method": "post", "action": "/device"],
                    [
                        HostedPage.hidden("csrf", HostedCookies.csrf(browser: browser, flowID: "device")),
                        HostedPage.field(
                            t("activate.code.label"), name: "user_code", value: shown, error: error,
                            hint: t("activate.code.hint"), autocomplete: "off", autofocus: true, maxlength: 16),
                        HostedPage.actions([HostedPage.button(t("common.continue"))]),
                    ]),
            ])
        return HostedPage.response(page, frame, status: status, headers: headers)
    }

    /// `POST /device`: a live code starts the sign-in for its device; anything else comes back to the form with a
    /// sentence that says what to do (never a 5xx, never JSON).
    func deviceEntered(_ request: Request) throws -> Response {
        let form = Form(request.body)
        let t = texts(request)
        let typed = form["user_code"] ?? ""
        guard let browser = HostedCookies.value(cookies.browser, in: request),
            ConstantTime.equals(form["csrf"] ?? "", HostedCookies.csrf(browser: browser, flowID: "device"))
        else { return deviceEntry(request, typed: typed, error: t("activate.again"), status: 400) }
        switch try devices.enter(typed, browser: browser, audit: AuditContext(request)) {
        case .limited(let wait):
            let frame = HostedPage.Frame(text: t, brand: brand, footer: t("footer.sign_in", ["brand": brand]))
            let page = HostedPage.layout(
                t("activate.busy.title"), frame,
                [
                    HostedPage.paragraph(t("common.too_many_tries", ["wait": t.duration(wait)])),
                    HostedPage.actions([HostedPage.link(t("activate.another"), "/device")]),
                ])
            return HostedPage.response(page, frame, status: 429, headers: [("Retry-After", String(wait))])
        case .unknown: return deviceEntry(request, typed: typed, error: t("activate.wrong"), status: 400)
        case .expired: return deviceEntry(request, typed: typed, error: t("activate.expired"), status: 400)
        case .decided: return deviceEntry(request, typed: typed, error: t("activate.decided"), status: 409)
        case .flow(let flow, let client):
            let context = Context(
                flow: flow, client: client, browser: browser,
                frame: HostedPage.Frame(
                    text: t, clientName: client.name, logoURI: client.logoURI, brand: brand, flowID: flow.id,
                    csrf: HostedCookies.csrf(browser: browser, flowID: flow.id), formTarget: flow.request.redirectURI))
            return try advance(context, token: HostedCookies.value(cookies.session, in: request), request)
        }
    }

    /// `GET /device/confirm`: who is signed in, the device's client and what it may do, Approve and Deny.
    func deviceConfirmationPage(_ request: Request) throws -> Response {
        // Opened by hand, with no sign-in behind it: the page where a code is typed.
        guard request.query["flow"] != nil else { return Response(status: 303, headers: [("Location", "/device")]) }
        guard let c = try context(request), let id = c.flow.progress.device else {
            return try deviceEnded(request, flowID: request.query["flow"])
        }
        guard
            let (caller, _) = try flows.session(
                token: HostedCookies.value(cookies.session, in: request), client: AuditContext(request))
        else { return Self.seeOther("/authorize/sign-in", flow: c.flow.id) }
        guard let device = try devices.pending(id) else {
            try flows.end(c.flow.id)
            return try deviceEnded(request, flowID: c.flow.id)
        }
        let t = c.frame.text
        let page = HostedPage.layout(
            t("activate.confirm.title", ["client": c.client.name]), c.frame,
            [
                HostedPage.paragraph(t("consent.signed_in_as", ["email": caller.user.email])),
                HostedPage.paragraph(t("activate.confirm.body", ["client": c.client.name])),
                .element(
                    "ul", [:], device.scopes.map { .element("li", [:], [.text(HostedPage.describe(scope: $0, t))]) }),
                .element("p", ["class": "notice", "role": "note"], [.text(t("activate.confirm.warning"))]),
                HostedPage.form(
                    Self.deviceConfirmation, c.frame,
                    [
                        // The account this page named: a decision posted after another account signed in (another
                        // tab) is not taken for it.
                        HostedPage.hidden("account", Self.accountMark(caller.session.id.raw)),
                        HostedPage.actions([
                            HostedPage.button(t("activate.approve"), name: "decision", value: "approve"),
                            HostedPage.button(t("activate.deny"), name: "decision", value: "deny", kind: "secondary"),
                        ]),
                    ]),
            ])
        return HostedPage.response(page, c.frame)
    }

    /// `POST /device/confirm`: the decision, once; then the page that sends the user back to the device.
    func deviceDecided(_ request: Request) throws -> Response {
        let form = Form(request.body)
        guard let c = try context(request, form: form), let id = c.flow.progress.device else {
            return try deviceEnded(request, flowID: form["flow"])
        }
        guard
            let (caller, _) = try flows.session(
                token: HostedCookies.value(cookies.session, in: request), client: AuditContext(request))
        else { return Self.seeOther("/authorize/sign-in", flow: c.flow.id, extra: "&signedout=1") }
        guard ConstantTime.equals(form["account"] ?? "", Self.accountMark(caller.session.id.raw)) else {
            return Self.seeOther(Self.deviceConfirmation, flow: c.flow.id)
        }
        let approve = form["decision"] == "approve"
        let decided = try devices.decide(id, approve: approve, session: caller.session, audit: AuditContext(request))
        // One decision per sign-in: Back or a reload finds the flow over and says so.
        try flows.end(c.flow.id)
        guard decided else { return try deviceEnded(request, flowID: c.flow.id) }
        return Self.seeOther("/device/done", flow: c.flow.id)
    }

    /// `GET /device/done?flow=…`: how this browser's device sign-in ended, from the device code's state, never from
    /// the address (an "approved" page nobody approved would send the user to a device that has no access).
    func deviceDone(_ request: Request) throws -> Response {
        guard request.query["flow"] != nil else { return Response(status: 303, headers: [("Location", "/device")]) }
        return try deviceOutcome(request, flowID: request.query["flow"], status: 200)
    }

    /// A mark of the session a confirmation page was drawn for (not the session's id itself).
    static func accountMark(_ sessionID: String) -> String {
        String(SHA256.hex("device confirm " + sessionID).prefix(32))
    }

    /// A confirmation opened again (Back, a reload, another tab) after it was decided or the code expired: what
    /// became of it, and a way on.
    func deviceEnded(_ request: Request, flowID: String?) throws -> Response {
        try deviceOutcome(request, flowID: flowID, status: 409)
    }

    /// The page of a device sign-in that is over: approved, denied, expired or left, in the words of its client and
    /// under its name, as the pages before it; a neutral page when the flow is not this browser's or unknown.
    private func deviceOutcome(_ request: Request, flowID: String?, status: Int) throws -> Response {
        let t = texts(request)
        let found = try devices.outcome(flowID: flowID, browser: HostedCookies.value(cookies.browser, in: request))
        guard let (device, client) = found else {
            let frame = HostedPage.Frame(text: t, brand: brand, footer: t("footer.sign_in", ["brand": brand]))
            let page = HostedPage.layout(
                t("activate.ended.title"), frame,
                [
                    HostedPage.paragraph(t("activate.ended.body")),
                    HostedPage.actions([HostedPage.link(t("activate.another"), "/device", class: "button secondary")]),
                ])
            return HostedPage.response(page, frame, status: status == 200 ? 400 : status)
        }
        let frame = HostedPage.Frame(text: t, clientName: client.name, logoURI: client.logoURI, brand: brand)
        let (title, body): (String, String) =
            switch device.status {
            case .approved, .used: ("activate.approved.title", "activate.done.approved.body")
            case .denied: ("activate.denied.title", "activate.done.denied.body")
            case .pending where device.expiresAt > devices.clock.now().millis:
                ("activate.ended.title", "activate.done.open.body")
            case .pending: ("activate.ended.title", "activate.done.expired.body")
            }
        let page = HostedPage.layout(
            t(title), frame,
            [
                HostedPage.paragraph(t(body, ["client": client.name])),
                HostedPage.actions([HostedPage.link(t("activate.another"), "/device", class: "button secondary")]),
            ])
        return HostedPage.response(page, frame, status: status)
    }
}
