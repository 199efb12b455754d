import Core
import Crypto
import Foundation
import HTTP
import WebUI

/// The operator's console, `/console`: staff (`trifactord staff grant`) sign in with the hosted sign-in as the
/// built-in first-party client and look up accounts, the audit log, test numbers, clients and webhooks; staff with
/// the `write` role act on accounts through the same `AdminService` calls as the admin API, each audited under
/// their id with their reason. Reading needs a second factor; acting needs a passkey or device key proven within the
/// last 5 minutes. Pages are hosted pages (one layout, the same CSP, cookies and no-store); forms carry a CSRF token
/// bound to the browser cookie and the session.
struct ConsoleRoutes: Sendable {
    let hosted: HostedRoutes
    let admin: AdminService
    let staff: StaffService
    /// Enables and disables endpoints (the lists come through `admin`, audited as the admin API's are).
    let webhooks: WebhookService
    /// Rotates a client's secret and deletes a client, as the admin API does (reads come through `admin`).
    let clients: ClientService
    /// The SMS-pumping guard's settings, drawn on the conversion chart.
    let conversion: VerifySettings.ConversionGuard

    /// How recent the hardware-bound proof behind a write must be.
    static let freshWindow: TimeInterval = 300
    /// Audit entries per page.
    static let auditPageSize = 50

    /// Adds the console's pages; every one answers with a page, never JSON or a bare 5xx.
    func register(on router: inout Router) {
        router.add("GET", "/console", execution: .database, page(dashboard))
        router.add("GET", "/console/users", execution: .database, page(search))
        router.add("GET", "/console/users/:id", execution: .database, page(userPage))
        router.add("POST", "/console/users/:id", execution: .database, hosted.page(userAction))
        router.add("GET", "/console/audit", execution: .database, page(auditPage))
        router.add("GET", "/console/test-numbers", execution: .database, page(testNumbersPage))
        router.add("POST", "/console/test-numbers", execution: .database, hosted.page(testNumberAction))
        router.add("GET", "/console/clients", execution: .database, page(clientsPage))
        router.add("GET", "/console/clients/:id", execution: .database, page(clientPage))
        router.add("POST", "/console/clients/:id", execution: .database, hosted.page(clientAction))
        router.add("GET", "/console/webhooks", execution: .database, page(webhooksPage))
        router.add("POST", "/console/webhooks/:id", execution: .database, hosted.page(webhookAction))
        router.add("GET", "/console/confirm", execution: .database, page(confirm))
        // A POST-only address opened by hand, or reloaded after its answer: its list.
        for (path, list) in [("/console/webhooks/:id", "/console/webhooks")] {
            router.add("GET", path, execution: .inline) { _ in Response(status: 303, headers: [("Location", list)]) }
        }
    }

    // MARK: Who is asking

    /// A staff member's request: who, their role, whether their proof lets them act, and the page frame.
    struct Staffed {
        let caller: Caller
        let member: StaffMember
        /// The form token of this browser and session.
        let csrf: String
        /// A passkey or device key proven within `freshWindow`: writes may go ahead.
        let proven: Bool
        var frame: HostedPage.Frame
        /// `Set-Cookie` for a browser that had no browser cookie yet.
        let headers: [(name: String, value: String)]

        var canWrite: Bool { member.role == .write }
    }

    /// Where the request was asked (path and query), as a flow may return to it.
    static func target(_ request: Request) -> String {
        let query = request.rawQuery.isEmpty ? "" : "?" + request.rawQuery
        let whole = request.path + query
        return OwnPages.isReturn(whole, under: "/console") ? whole : request.path
    }

    /// What answers a request that is not (yet) a staff member's: the sign-in, or the page saying this account is not
    /// staff. Nil: `Staffed` for the page.
    func gate(_ request: Request) throws -> (Staffed?, Response?) {
        guard let caller = try hosted.signedIn(request), FlowService.level(of: caller.session) >= .mfa else {
            // Not signed in, or only with a password: the hosted sign-in with a second factor, then back here.
            guard request.method == "GET" else {
                return (nil, Response(status: 303, headers: [("Location", request.path)]))
            }
            return (
                nil, try hosted.signInForOwnPage(request, path: "/console", level: .mfa, then: Self.target(request))
            )
        }
        let (browser, headers) = hosted.browserCookie(request)
        var frame = HostedPage.Frame(text: hosted.texts(request), brand: hosted.brand)
        frame.footer = "\(hosted.brand) · operator's console, for staff only"
        frame.wide = true
        guard let member = try staff.member(caller.user.id) else {
            let body: [HTML] = [
                HostedPage.paragraph(
                    "This account is not staff: the operator's console is for the people who run \(hosted.brand). You are signed in as \(caller.user.email)."
                ),
                HostedPage.paragraph("If you should have access, ask an operator to run: trifactord staff grant."),
                HostedPage.actions([
                    HostedPage.link("Sign out", "/logout", class: "button primary"),
                    HostedPage.link("Back to the start", "/", class: "button secondary"),
                ]),
            ]
            return (
                nil,
                HostedPage.response(
                    HostedPage.layout("This account is not staff", frame, body), frame, status: 403, headers: headers)
            )
        }
        let now = admin.clock.now().millis
        // The hardware-bound key must be the fresh proof, not some earlier one: a session's methods only accumulate,
        // and a later step-up with a texted or app code refreshes its second-factor time. "Confirm it's you" signs in
        // anew (max_age=0), so a session made within the window at the hardware level is one a passkey or device key
        // proved just now.
        let proven =
            FlowService.level(of: caller.session) >= .hardwareKey
            && caller.session.createdAt >= now - Int64(Self.freshWindow * 1000)
            && caller.session.freshSecondFactor(now: now, window: Self.freshWindow)
        let csrf = HostedCookies.csrf(browser: browser, flowID: "console:\(caller.session.id.raw)")
        return (
            Staffed(caller: caller, member: member, csrf: csrf, proven: proven, frame: frame, headers: headers), nil
        )
    }

    /// A console page for staff: anyone else is signed in first or told they are not staff.
    func page(_ body: @escaping @Sendable (Request, Staffed) throws -> Response) -> Router.Handler {
        hosted.page { request in
            let (staffed, answer) = try gate(request)
            guard let staffed else { return answer ?? Response(status: 303, headers: [("Location", "/console")]) }
            return try body(request, staffed)
        }
    }

    /// A console page: the hosted layout with the console's menu above `body`.
    func render(
        _ title: String, _ s: Staffed, notice: String? = nil, status: Int = 200, _ body: [HTML]
    ) -> Response {
        let menu: [(String, String)] = [
            ("Dashboard", "/console"), ("Users", "/console/users"), ("Audit log", "/console/audit"),
            ("Test numbers", "/console/test-numbers"), ("Clients", "/console/clients"),
            ("Webhooks", "/console/webhooks"),
        ]
        let nav = HTML.element(
            "nav", ["aria-label": "Console", "class": "console-nav"],
            menu.map { HostedPage.link($0.0, $0.1) } + [
                .element(
                    "span", ["class": "hint"],
                    [.text("\(s.caller.user.email) · \(s.member.role.rawValue) role · ")]),
                HostedPage.link("Sign out", "/logout"),
            ])
        return HostedPage.response(
            HostedPage.layout(title, s.frame, notice: notice, [nav] + body), s.frame, status: status,
            headers: s.headers)
    }

    /// The page for a form that is not this browser's and session's (stale, from another tab's older session, or
    /// forged): nothing was done; the way on is the page again.
    func staleForm(_ s: Staffed, back: String) -> Response {
        render(
            "This form has expired", s, status: 400,
            [
                HostedPage.paragraph(
                    "Nothing was changed: the form was made for an earlier sign-in or another browser. Open the page again and repeat the action if it is still needed."
                ),
                HostedPage.actions([HostedPage.link("Open the page again", back, class: "button primary")]),
            ])
    }

    /// A read-only staff member's write, audited and refused; nothing was done.
    func readOnly(_ s: Staffed, _ request: Request, back: String) throws -> Response {
        let now = admin.clock.now().millis
        try admin.transactions.write { db in
            try AuditLog.append(
                AuditContext(request).event(
                    .staffRefused, .denied, userID: s.caller.user.id,
                    detail: "admin=staff:\(s.caller.user.id.raw) read-only: \(request.method) \(request.path)"),
                at: now, on: db)
        }
        return render(
            "Your role is read-only", s, status: 403,
            [
                HostedPage.paragraph(
                    "Nothing was changed: your staff role lets you look up accounts, not change them."),
                HostedPage.actions([HostedPage.link("Back", back, class: "button primary")]),
            ])
    }

    /// What a write's checks decided: go ahead as this staff member with this form, or answer with this page.
    enum WriteCheck {
        /// Every check passed: act as this staff member on this form.
        case allowed(Staffed, Form)
        /// A check failed (or the sign-in must happen first): this page answers, nothing was changed.
        case answered(Response)
    }

    /// A write's checks, in order: a staff member's session, this browser's and session's form token, the `write`
    /// role (a refusal is audited) and a passkey or device-key proof within `freshWindow`. Nothing is changed here;
    /// `back` is where a refusing page leads.
    func checkWrite(_ request: Request, back: String) throws -> WriteCheck {
        let (staffed, answer) = try gate(request)
        guard let s = staffed else {
            return .answered(answer ?? Response(status: 303, headers: [("Location", "/console")]))
        }
        let form = Form(request.body)
        guard ConstantTime.equals(form["csrf"] ?? "", s.csrf) else { return .answered(staleForm(s, back: back)) }
        guard s.canWrite else { return .answered(try readOnly(s, request, back: back)) }
        guard s.proven else { return .answered(confirmFirst(s, back: back)) }
        return .allowed(s, form)
    }

    /// What is wrong with a change's reason, said next to its field; nil when it will do.
    static func reasonProblem(_ reason: String) -> String? {
        if reason.isEmpty { return "Give a reason: it goes into the audit log with your name." }
        return reason.count > 200 ? "Keep the reason to 200 characters." : nil
    }

    /// How a feature service that takes an actor line (clients, webhooks) names a staff member in the audit log:
    /// `admin=staff:<id> reason=<reason>`, on one line.
    static func actorLine(_ actor: AdminService.Actor) -> String {
        let reason = (actor.reason ?? "").unicodeScalars.map { $0.value < 0x20 ? " " : Character($0) }
        return "admin=\(actor.name) reason=\(String(reason))"
    }

    /// The page that asks a staff member for a fresh passkey or device-key proof before a change.
    func confirmFirst(_ s: Staffed, back: String) -> Response {
        render(
            "Confirm it's you", s, status: 403,
            [
                HostedPage.paragraph(
                    "Nothing was changed yet: a change needs your passkey or device key, used within the last 5 minutes."
                ),
                HostedPage.actions([
                    HostedPage.link("Confirm it's you", Self.confirmLink(back), class: "button primary"),
                    HostedPage.link("Back", back, class: "button secondary"),
                ]),
            ])
    }

    /// `value` as it goes in a query: RFC 3986 unreserved characters kept, the rest percent-encoded.
    static func encoded(_ value: String) -> String {
        var unreserved = CharacterSet.alphanumerics.intersection(.init(charactersIn: Unicode.Scalar(0)..<"\u{80}"))
        unreserved.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    /// The address that asks for the fresh proof, then returns to `back`.
    static func confirmLink(_ back: String) -> String {
        "/console/confirm?then=" + encoded(back)
    }

    /// `GET /console/confirm?then=`: a fresh sign-in with a passkey or device key, back to the page that asked.
    func confirm(_ request: Request, _ s: Staffed) throws -> Response {
        let then = request.query["then"].flatMap { OwnPages.isReturn($0, under: "/console") ? $0 : nil } ?? "/console"
        return try hosted.signInForOwnPage(request, path: "/console", level: .hardwareKey, fresh: true, then: then)
    }

    /// A page for an address that names nothing (no such account or endpoint).
    func notFound(_ s: Staffed, _ sentence: String, back: (String, String)) -> Response {
        render(
            "Not found", s, status: 404,
            [
                HostedPage.paragraph(sentence),
                HostedPage.actions([HostedPage.link(back.0, back.1, class: "button primary")]),
            ])
    }

    /// A date and time as staff read it: `2026-12-06 22:33 UTC`.
    static func time(_ millis: Int64?) -> String { millis.map { time(Date(millis: $0)) } ?? "—" }

    /// `date` as staff read it (UTC, to the minute).
    static func time(_ date: Date) -> String {
        let iso = date.formatted(Date.ISO8601FormatStyle(timeZone: TimeZone(identifier: "UTC") ?? .current))
        return iso.prefix(16).replacingOccurrences(of: "T", with: " ") + " UTC"
    }
}
