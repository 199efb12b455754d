import Core
import Crypto
import Foundation
import HTTP
import WebUI

/// The page a CIBA text links to (`BackchannelService.text`): the client's name and binding message, Approve and
/// Deny. Opening it decides nothing (a link preview, a scanner); the decision is a POST with the page's CSRF token,
/// answered by a redirect to the same page (Post/Redirect/Get), which from then on says what became of the request:
/// Back, a reload, a second tab, a used or expired link each land on a page that says so, never a dead end.
extension HostedRoutes {
    func registerBackchannel(on router: inout Router) {
        router.add("GET", BackchannelService.linkPath, execution: .database, page(backchannelPage))
        router.add("POST", BackchannelService.linkPath, execution: .database, page(backchannelDecided))
    }

    /// `GET /ciba/approve?code=…`: the request while it waits, or what became of it.
    func backchannelPage(_ request: Request) throws -> Response {
        let code = request.query["code"]
        return backchannelAnswer(request, code: code, try backchannel.link(code))
    }

    /// `POST /ciba/approve`: Approve or Deny, once; then the page again.
    func backchannelDecided(_ request: Request) throws -> Response {
        let form = Form(request.body)
        let code = form["code"]
        guard let hash = BackchannelService.linkHash(code), let code else {
            return backchannelAnswer(request, code: nil, nil)
        }
        let again = Response(
            status: 303, headers: [("Location", BackchannelService.linkPath + "?code=" + code)])
        // Without this browser's token (a form from elsewhere, a cookie gone): the page again, nothing decided.
        guard let browser = HostedCookies.value(cookies.browser, in: request),
            ConstantTime.equals(form["csrf"] ?? "", HostedCookies.csrf(browser: browser, flowID: "ciba:" + hash)),
            let decision = form["decision"], ["approve", "deny"].contains(decision)
        else { return again }
        _ = try backchannel.decide(code, approve: decision == "approve", audit: AuditContext(request))
        return again
    }

    private func backchannelAnswer(_ request: Request, code: String?, _ link: BackchannelService.Link?) -> Response {
        guard let link, let code else {
            let t = texts(request)
            let frame = HostedPage.Frame(text: t, brand: brand, footer: t("footer.sign_in", ["brand": brand]))
            return HostedPage.response(
                HostedPage.layout(
                    t("ciba.unknown.title"), frame, [HostedPage.paragraph(t("ciba.unknown.body"))]),
                frame, status: 404)
        }
        let t = texts(request, account: link.locale)
        let client = link.clientName
        let frame = HostedPage.Frame(
            text: t, clientName: client, logoURI: link.logoURI, brand: brand,
            footer: t("footer.ciba", ["client": client, "brand": brand]))
        var body: [HTML] = []
        let title: String
        switch link.state {
        case .waiting:
            let (browser, headers) = browserCookie(request)
            title = t("ciba.title", ["client": client])
            body.append(HostedPage.paragraph(t("ciba.body", ["client": client])))
            if let message = link.bindingMessage {
                body.append(
                    .element(
                        "dl", ["class": "summary"],
                        [
                            .element("dt", [:], [.text(t("ciba.message"))]),
                            .element("dd", ["dir": "auto"], [.text(message)]),
                        ]))
            }
            body.append(
                .element("p", ["class": "notice", "role": "note"], [.text(t("ciba.warning", ["client": client]))]))
            body.append(
                .element(
                    "form", ["method": "post", "action": BackchannelService.linkPath],
                    [
                        HostedPage.hidden("code", code),
                        HostedPage.hidden("csrf", HostedCookies.csrf(browser: browser, flowID: "ciba:" + link.hash)),
                        HostedPage.actions([
                            HostedPage.button(t("ciba.approve"), name: "decision", value: "approve"),
                            HostedPage.button(t("ciba.deny"), name: "decision", value: "deny", kind: "secondary"),
                        ]),
                    ]))
            return HostedPage.response(HostedPage.layout(title, frame, body), frame, headers: headers)
        case .approved:
            title = t("ciba.approved.title")
            body.append(HostedPage.paragraph(t("ciba.approved.body", ["client": client])))
        case .denied:
            title = t("ciba.denied.title")
            body.append(HostedPage.paragraph(t("ciba.denied.body", ["client": client])))
        case .expired:
            title = t("ciba.expired.title")
            body.append(HostedPage.paragraph(t("ciba.expired.body", ["client": client])))
        }
        return HostedPage.response(
            HostedPage.layout(title, frame, body), frame, status: link.state == .expired ? 410 : 200)
    }
}
