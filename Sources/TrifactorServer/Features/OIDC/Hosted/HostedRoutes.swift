import Core
import Crypto
import Foundation
import HTTP
import Sitekeys
import WebUI

/// The hosted sign-in: `/authorize` and the pages after it. Each page
/// checks the flow and its CSRF token, calls the same services as the API,
/// and answers with a page (never JSON, never a 5xx without a page) or a
/// redirect that follows Post/Redirect/Get.
struct HostedRoutes: Sendable {
    let flows: FlowService
    let sessions: SessionService
    let secondFactors: SecondFactorService
    let passwordless: PasswordlessService
    let enrollments: EnrollmentService
    let resets: PasswordResetService
    /// The security page's "This wasn't me".
    let accounts: AccountService
    /// The sitekey on the password page, and the browsers recognised for an account.
    let sitekeys: SitekeyService
    /// Approvals bound to what they approve: a payment's authorization details.
    let authorizations: AuthorizationService
    /// CIBA requests approved by a link texted to a user without a device.
    let backchannel: BackchannelService
    let cookies: HostedCookies
    /// Checks ID token hints at logout.
    let minter: TokenMinter
    /// The issuer, sent back as `iss` with every answer (RFC 9207).
    let issuer: String
    /// The server's own name.
    let brand: String
    /// The pages' language when nothing else names one of ours.
    let defaultLanguage: String

    func register(on router: inout Router) {
        router.add("GET", "/authorize", execution: .database, page(authorize))
        router.add("POST", "/authorize", execution: .database, page(authorize))
        router.add("GET", "/authorize/sign-in", execution: .database, page(emailPage))
        router.add("POST", "/authorize/sign-in", execution: .database, page(emailSubmitted))
        router.add("GET", "/authorize/password", execution: .database, page(passwordPage))
        router.add("POST", "/authorize/password", execution: .hashing, page(passwordSubmitted))
        router.add("GET", "/authorize/second-factor", execution: .database, page(secondFactorPage))
        router.add("POST", "/authorize/second-factor", execution: .database, page(codeSubmitted))
        router.add("POST", "/authorize/second-factor/send", execution: .database, page(sendCode))
        router.add("POST", "/authorize/passkey/options", execution: .database, page(passkeyOptions))
        router.add("POST", "/authorize/passkey", execution: .database, page(passkeySignIn))
        router.add("GET", "/authorize/reset", execution: .database, page(resetPage))
        router.add("POST", "/authorize/reset", execution: .database, page(resetRequested))
        router.add("GET", "/authorize/reset/code", execution: .database, page(resetCodePage))
        router.add("POST", "/authorize/reset/code", execution: .database, page(resetCodeSubmitted))
        router.add("GET", "/authorize/reset/password", execution: .database, page(resetPasswordPage))
        router.add("POST", "/authorize/reset/send", execution: .database, page(resetSend))
        router.add("POST", "/authorize/reset/password", execution: .hashing, page(resetPasswordSubmitted))
        router.add("GET", "/authorize/consent", execution: .database, page(consentPage))
        router.add("POST", "/authorize/consent", execution: .database, page(consentSubmitted))
        router.add("GET", "/authorize/payment", execution: .database, page(paymentPage))
        router.add("POST", "/authorize/payment/send", execution: .database, page(paymentSend))
        router.add("POST", "/authorize/payment", execution: .database, page(paymentApproved))
        router.add("GET", "/authorize/account", execution: .database, page(accountPage))
        router.add("POST", "/authorize/account", execution: .database, page(accountChosen))
        router.add("GET", "/authorize/add-factor", execution: .database, page(addFactorPage))
        router.add("POST", "/authorize/add-factor", execution: .database, page(addFactor))
        router.add("GET", "/authorize/add-factor/app", execution: .database, page(addFactorAppPage))
        router.add("POST", "/authorize/add-factor/app", execution: .database, page(addFactorAppSubmitted))
        router.add("POST", "/authorize/cancel", execution: .database, page(cancel))
        router.add("POST", "/authorize/forget-browser", execution: .database, page(forgetBrowser))
        registerDevice(on: &router)
        registerBackchannel(on: &router)
        registerAccount(on: &router)
        // A POST-only address opened by hand, restored with a tab or reloaded after its answer: the page it belongs to.
        for (path, target) in [
            ("/authorize/second-factor/send", "/authorize/second-factor"), ("/authorize/cancel", "/authorize/sign-in"),
            ("/authorize/passkey", "/authorize/sign-in"),
            ("/authorize/forget-browser", "/authorize/password"),
            ("/authorize/reset/send", "/authorize/reset/password"),
            ("/authorize/payment/send", "/authorize/payment"),
        ] {
            router.add("GET", path, execution: .database) { request in
                guard let flow = request.query["flow"], SessionToken.isWellFormed(flow) else {
                    return lostFlow(request)
                }
                return Self.seeOther(target, flow: flow)
            }
        }
        router.add("GET", "/logout/confirm", execution: .inline) { _ in
            Response(status: 303, headers: [("Location", "/logout")])
        }
        router.add("GET", "/logout", execution: .database, page(logout))
        router.add("POST", "/logout", execution: .database, page(logout))
        router.add("POST", "/logout/confirm", execution: .database, page(logoutConfirmed))
        router.add("GET", HostedPage.stylesheet, execution: .inline) { _ in
            Self.file(Style.css, type: "text/css; charset=utf-8")
        }
        router.add("GET", SitekeyPictures.route, execution: .inline, SitekeyPictures.serve)
        router.add("GET", HostedPage.script, execution: .inline) { _ in
            Self.file(HostedScript.source, type: "text/javascript; charset=utf-8")
        }
    }

    private static func file(_ text: String, type: String) -> Response {
        Response(
            status: 200,
            headers: [("Content-Type", type), ("Cache-Control", "max-age=300")],
            body: Array(text.utf8))
    }

    /// A page handler whose failures still answer with a page: a database that is away is a 503 page, never a
    /// bare 5xx or JSON.
    func page(_ handler: @escaping @Sendable (Request) throws -> Response) -> Router.Handler {
        { request in
            do {
                return try handler(request)
            } catch {
                let frame = HostedPage.Frame(text: texts(request), brand: brand)
                let t = frame.text
                let page = HostedPage.layout(
                    t("unavailable.title"), frame, [HostedPage.paragraph(t("unavailable.body"))])
                return HostedPage.response(page, frame, status: 503, headers: [("Retry-After", "5")])
            }
        }
    }

    // MARK: The flow each page continues

    /// A page's flow, client, this browser's cookie and the page frame.
    struct Context {
        var flow: AuthorizationFlow
        let client: OIDCClient
        let browser: String
        var frame: HostedPage.Frame
    }

    /// The flow named by the request (query on GET, form on POST), when it is live and this browser's.
    func context(_ request: Request, form: Form? = nil) throws -> Context? {
        let id = form?["flow"] ?? request.query["flow"]
        guard let browser = HostedCookies.value(cookies.browser, in: request), let (flow, client) = try flows.open(id),
            flow.progress.browser.map({ ConstantTime.equals($0, SHA256.hex(browser)) }) ?? true
        else { return nil }
        let csrf = HostedCookies.csrf(browser: browser, flowID: flow.id)
        // A form must carry the token only a page rendered for this browser holds.
        if let form, !ConstantTime.equals(form["csrf"] ?? "", csrf) { return nil }
        return Context(
            flow: flow, client: client, browser: browser,
            frame: HostedPage.Frame(
                text: texts(request, uiLocales: flow.request.uiLocales, account: flow.progress.language),
                clientName: client.name, logoURI: client.logoURI, brand: brand, flowID: flow.id, csrf: csrf,
                formTarget: flow.request.redirectURI))
    }

    /// The language of a page for `request`: see `HostedText.negotiate`.
    func texts(_ request: Request, uiLocales: [String] = [], account: String? = nil) -> HostedText {
        HostedText.negotiate(uiLocales: uiLocales, account: account, request: request, fallback: defaultLanguage)
    }

    /// This browser's cookie, and the `Set-Cookie` that makes it when it has none (flows and the logout form are
    /// bound to it).
    func browserCookie(_ request: Request) -> (value: String, headers: [(name: String, value: String)]) {
        if let known = HostedCookies.value(cookies.browser, in: request) { return (known, []) }
        let made = Base64URL.encode(flows.random.bytes(32))
        return (made, [cookies.set(cookies.browser, made)])
    }

    /// The signed-in caller of this browser, nil when its session is gone (signed out here or elsewhere, expired).
    func signedIn(_ request: Request) throws -> Caller? {
        try flows.session(token: HostedCookies.value(cookies.session, in: request), client: AuditContext(request))?.0
    }

    /// The page for a flow that is gone, expired, or opened in another browser.
    /// When the flow is still known (finished, or expired within the half hour it is kept), the page names its app
    /// and links back to the app's site, so it is never a dead end.
    func lostFlow(_ request: Request) -> Response {
        let id = request.query["flow"] ?? (request.method == "POST" ? Form(request.body)["flow"] : nil)
        let known = id.flatMap { id in
            SessionToken.isWellFormed(id)
                ? try? flows.transactions.read {
                    try FlowRepository.origin(of: id, now: flows.clock.now().millis, on: $0)
                } : nil
        }
        var frame = HostedPage.Frame(text: texts(request), clientName: known?.clientName, brand: brand)
        let t = frame.text
        if let known, known.paid || known.payment {
            frame.footer = t("footer.paying", ["client": known.clientName, "brand": brand])
        }
        // Back, a reload or another tab after a payment was approved: it is done, and must not look like a failure
        // that invites paying again. A payment's approval that ended otherwise (cancelled, expired) says so: what
        // ended is the payment's approval, not a sign-in.
        let paid = known?.paid == true
        let payment = known?.payment == true
        let sentence = paid ? "payment.done" : payment ? "lost.payment.body_app" : "lost.body_app"
        var body: [HTML] = [
            HostedPage.paragraph(known.map { t(sentence, ["client": $0.clientName]) } ?? t("lost.body"))
        ]
        if let known, let site = HostedPage.origin(known.redirectURI) {
            body.append(
                HostedPage.actions([
                    HostedPage.link(
                        t("common.return_to", ["client": known.clientName]), site + "/", class: "button primary")
                ]))
        }
        return HostedPage.response(
            HostedPage.layout(
                t(paid ? "payment.done.title" : payment ? "lost.payment.title" : "lost.title"), frame, body), frame,
            status: paid ? 200 : 400)
    }

    /// A 303 to `path` of this flow (Post/Redirect/Get).
    static func seeOther(
        _ path: String, flow: String, extra: String = "", headers: [(name: String, value: String)] = []
    )
        -> Response
    {
        Response(status: 303, headers: [("Location", "\(path)?flow=\(flow)\(extra)")] + headers)
    }
}
