import API
import Core
import Crypto
import Foundation
import HTTP
import Store
import WebUI

/// The security page (`/account`): what any signed-in user can see and change about their own security, hosted by
/// trifactord so every app can link to it. It signs in through the hosted sign-in (`OwnPages`), asks for a second
/// factor, and calls the same services as the API: one removal, one session end, one audit log.
extension HostedRoutes {
    /// The signed-in user of a security page, with its CSRF token and frame.
    struct AccountContext {
        let caller: Caller
        let csrf: String
        var frame: HostedPage.Frame
        let now: Int64
    }

    /// The notices a page may show after an action (`?done=`), by the sentence's key.
    static let accountNotices: [String: String] = [
        "renamed": "security.done.renamed", "removed": "security.done.removed", "ended": "security.done.ended",
        "ended_all": "security.done.ended_all", "confirmed": "security.done.confirmed",
    ]

    func registerAccount(on router: inout Router) {
        router.add("GET", "/account", execution: .database, signedInGET(accountHome))
        router.add("POST", "/account/rename", execution: .database, signedInPOST(accountRename))
        router.add("GET", "/account/remove", execution: .database, signedInGET(accountRemovePage))
        router.add("POST", "/account/remove", execution: .database, signedInPOST(accountRemove))
        router.add("POST", "/account/sessions/end", execution: .database, signedInPOST(accountEndSession))
        router.add("GET", "/account/recovery-codes", execution: .database, signedInGET(accountCodesPage))
        router.add("POST", "/account/recovery-codes", execution: .database, signedInPOST(accountCodes))
        router.add("GET", "/account/not-me", execution: .database, signedInGET(accountNotMePage))
        router.add("POST", "/account/not-me", execution: .hashing, signedInPOST(accountNotMe))
        router.add("POST", "/account/confirm", execution: .database, signedInPOST(accountConfirm))
        router.add("POST", "/account/sign-out", execution: .database, signedInPOST(accountSignOut))
        // A POST-only address opened by hand or reloaded after its answer: the security page.
        for path in ["/account/rename", "/account/sessions/end", "/account/confirm", "/account/sign-out"] {
            router.add("GET", path, execution: .inline) { _ in
                Response(status: 303, headers: [("Location", "/account")])
            }
        }
    }

    /// The signed-in user of this browser, when their session proved a second factor; nil otherwise (the page then
    /// signs them in). A form must carry the CSRF token of this browser and session, or `forged` is set.
    func accountContext(_ request: Request, form: Form? = nil) throws -> (AccountContext?, forged: Bool) {
        guard let browser = HostedCookies.value(cookies.browser, in: request), let caller = try signedIn(request),
            FlowService.level(of: caller.session) >= .mfa
        else { return (nil, false) }
        let csrf = HostedCookies.csrf(browser: browser, flowID: "account:" + caller.session.id.raw)
        if let form, !ConstantTime.equals(form["csrf"] ?? "", csrf) { return (nil, true) }
        let t = texts(request, account: caller.user.locale)
        let frame = HostedPage.Frame(
            text: t, brand: brand, csrf: csrf,
            footer: t("security.footer", ["brand": brand, "email": caller.user.email]))
        return (AccountContext(caller: caller, csrf: csrf, frame: frame, now: flows.clock.now().millis), false)
    }

    /// The context of a security page's request, or the answer when there is none: a sign-in for a GET, the page
    /// again for a POST whose session ended, and a page that says so for a form from another page or session.
    func account(_ request: Request, form: Form? = nil, then: String = "/account") throws -> Result<
        AccountContext, AccountExit
    > {
        let (context, forged) = try accountContext(request, form: form)
        if let context { return .success(context) }
        if forged {
            let t = texts(request)
            let frame = HostedPage.Frame(text: t, brand: brand)
            return .failure(
                AccountExit(
                    HostedPage.response(
                        HostedPage.layout(
                            t("security.expired.title"), frame,
                            [
                                HostedPage.paragraph(t("security.expired.body")),
                                HostedPage.actions([
                                    HostedPage.link(t("security.open"), "/account", class: "button primary")
                                ]),
                            ]), frame, status: 400)))
        }
        if form != nil { return .failure(AccountExit(Response(status: 303, headers: [("Location", "/account")]))) }
        return .failure(AccountExit(try signInForOwnPage(request, path: "/account", then: then)))
    }

    /// A security page shown to its signed-in user; anyone else signs in first and comes back to this address.
    func signedInGET(_ handler: @escaping @Sendable (Request, AccountContext) throws -> Response) -> Router.Handler {
        page { request in
            let here = request.rawQuery.isEmpty ? request.path : request.path + "?" + request.rawQuery
            switch try account(request, then: here) {
            case .success(let c): return try handler(request, c)
            case .failure(let exit): return exit.response
            }
        }
    }

    /// A security page's form, taken only from its signed-in user with this browser's and session's token.
    func signedInPOST(_ handler: @escaping @Sendable (Request, Form, AccountContext) throws -> Response)
        -> Router.Handler
    {
        page { request in
            let form = Form(request.body)
            switch try account(request, form: form) {
            case .success(let c): return try handler(request, form, c)
            case .failure(let exit): return exit.response
            }
        }
    }

    /// What a security page answers when it has no signed-in user to show.
    struct AccountExit: Error {
        let response: Response
        init(_ response: Response) { self.response = response }
    }

    /// A form of the security page: its CSRF token and fields.
    static func accountForm(_ action: String, _ c: AccountContext, _ children: [HTML], class name: String? = nil)
        -> HTML
    {
        .element(
            "form", ["method": "post", "action": action, "class": name],
            [HostedPage.hidden("csrf", c.csrf)] + children)
    }

    /// "5 minutes ago", in the page's language: `at` (ms) against `now` (ms).
    static func ago(_ at: Int64, now: Int64, _ t: HostedText) -> HTML {
        let date = Date(millis: at)
        let shown = Date().addingTimeInterval(-Double(max(0, now - at)) / 1000)
        var style = Date.RelativeFormatStyle(presentation: .named, unitsStyle: .wide)
        style.locale = t.formattingLocale
        return .element(
            "time", ["datetime": ISO8601DateFormatter().string(from: date)], [.text(style.format(shown))])
    }

    /// The sentence `key` with its `{when}` written as `ago` writes it, inside a `<time>` element: the words around
    /// the time stay in the language's order.
    static func timed(_ key: String, _ at: Int64, now: Int64, _ t: HostedText) -> [HTML] {
        let marker = "\u{1}"
        let parts = t(key, ["when": marker]).components(separatedBy: marker)
        guard parts.count == 2 else { return [.text(t(key, ["when": ""]))] }
        return [.text(parts[0]), ago(at, now: now, t), .text(parts[1])]
    }

    // MARK: The page

    /// `GET /account`.
    func accountHome(_ request: Request, _ c: AccountContext) throws -> Response {
        let notice = request.query["done"].flatMap { Self.accountNotices[$0] }.map { c.frame.text($0) }
        return try accountPage(c, notice: notice)
    }

    /// The security page, with `notice` above it and a rename refused with `renameError` (factor id, sentence).
    func accountPage(
        _ c: AccountContext, notice: String? = nil, renameError: (String, String)? = nil, status: Int = 200
    )
        throws -> Response
    {
        let t = c.frame.text
        let factors = try enrollments.listed(c.caller)
        let live = try sessions.list(c.caller)
        let events = try flows.transactions.read {
            try AuditLog.recent(user: c.caller.user.id.raw, kinds: Self.securityEvents, limit: 20, on: $0)
        }
        var body: [HTML] = [HostedPage.paragraph(t("security.intro", ["email": c.caller.user.email]))]
        body.append(factorsSection(factors.filter { $0.kind != .recoveryCode }, c, renameError: renameError))
        body.append(codesSection(factors.first { $0.kind == .recoveryCode }, hasFactor: factors.count > 0, c))
        body.append(sessionsSection(live, c))
        body.append(eventsSection(events, c))
        body.append(
            .element(
                "section", ["aria-labelledby": "h-not-me"],
                [
                    .element("h2", ["id": "h-not-me"], [.text(t("security.not_me.heading"))]),
                    HostedPage.paragraph(t("security.not_me.body")),
                    HostedPage.actions([
                        HostedPage.link(t("security.not_me.button"), "/account/not-me", class: "button secondary")
                    ]),
                ]))
        body.append(
            Self.accountForm(
                "/account/sign-out", c, [HostedPage.button(t("security.sign_out"), kind: "secondary")],
                class: "actions"))
        return HostedPage.response(
            HostedPage.layout(t("security.title"), c.frame, notice: notice, body), c.frame, status: status)
    }

    /// The audit kinds the page lists as the user's security events.
    static let securityEvents: [AuditEventKind] = [
        .signInSucceeded, .signInFailed, .signInLocked, .mfaEnrolled, .mfaRemoved, .mfaRenamed, .mfaFailed, .mfaLocked,
        .passwordChanged, .passwordReset, .recoveryCodesGenerated, .recoveryCodeUsed, .sessionRevoked,
        .adminMFAReset, .adminSessionsRevoked, .adminUserDisabled, .adminUserEnabled, .reportedNotMe,
        .browserRecognised, .pushDenied, .emailVerified,
    ]

    /// A factor's kind in the user's words.
    static func kindLabel(_ f: EnrolledFactor, _ t: HostedText) -> String {
        switch f.kind {
        case .totp: t("security.kind.totp")
        case .phone: t("security.kind.phone", ["phone": f.maskedPhone ?? ""])
        case .passkey: t("security.kind.passkey")
        case .device: t(f.approvalBound == true ? "security.kind.device_bound" : "security.kind.device")
        default: t("security.kind.other")
        }
    }

    private func factorsSection(_ factors: [EnrolledFactor], _ c: AccountContext, renameError: (String, String)?)
        -> HTML
    {
        let t = c.frame.text
        var items: [HTML] = []
        for f in factors {
            let error = renameError.flatMap { $0.0 == f.enrollmentID ? $0.1 : nil }
            var detail: [HTML] =
                [.element("span", ["class": "kind"], [.text(Self.kindLabel(f, t))]), .text(" · ")]
                + Self.timed("security.added", Int64(f.enrolledAt.timeIntervalSince1970 * 1000), now: c.now, t)
            if let used = f.lastUsedAt {
                detail.append(.text(" · "))
                detail += Self.timed("security.used", Int64(used.timeIntervalSince1970 * 1000), now: c.now, t)
            }
            let rename = Self.accountForm(
                "/account/rename", c,
                [
                    HostedPage.hidden("factor", f.enrollmentID),
                    HostedPage.field(
                        t("security.rename.label"), name: "name", value: f.displayName, error: error, maxlength: 64,
                        id: "name-\(f.enrollmentID)"),
                    HostedPage.button(t("security.rename.save"), kind: "secondary"),
                ], class: "rename")
            items.append(
                .element(
                    "li", [:],
                    [
                        .element("strong", [:], [.text(f.displayName)]),
                        .element("p", ["class": "hint"], detail),
                        .element(
                            "details", ["open": error == nil ? nil : ""],
                            [.element("summary", [:], [.text(t("security.rename", ["name": f.displayName]))]), rename]),
                        HostedPage.link(
                            t("security.remove", ["name": f.displayName]), "/account/remove?factor=\(f.enrollmentID)",
                            class: "button secondary"),
                    ]))
        }
        return .element(
            "section", ["aria-labelledby": "h-factors"],
            [
                .element("h2", ["id": "h-factors"], [.text(t("security.factors.heading"))]),
                items.isEmpty
                    ? HostedPage.paragraph(t("security.factors.none"))
                    : .element("ul", ["class": "list"], items),
            ])
    }

    private func codesSection(_ codes: EnrolledFactor?, hasFactor: Bool, _ c: AccountContext) -> HTML {
        let t = c.frame.text
        let left = codes?.codesLeft ?? 0
        var children: [HTML] = [.element("h2", ["id": "h-codes"], [.text(t("security.codes.heading"))])]
        children.append(
            HostedPage.paragraph(
                codes == nil ? t("security.codes.none") : t("security.codes.left", ["left": t.number(left)])))
        if hasFactor {
            children.append(
                HostedPage.actions([
                    HostedPage.link(t("security.codes.new"), "/account/recovery-codes", class: "button secondary")
                ]))
        }
        return .element("section", ["aria-labelledby": "h-codes"], children)
    }

    private func sessionsSection(_ live: [SessionRecord], _ c: AccountContext) -> HTML {
        let t = c.frame.text
        var items: [HTML] = []
        for s in live {
            let here = s.id == c.caller.session.id
            var children: [HTML] = [
                .element("strong", [:], [.text(DeviceName.describe(userAgent: s.userAgent))]),
                here ? .element("span", ["class": "tag"], [.text(t("security.sessions.here"))]) : .empty,
                .element(
                    "p", ["class": "hint"],
                    Self.timed("security.sessions.signed_in", s.createdAt, now: c.now, t) + [.text(" · ")]
                        + Self.timed("security.sessions.active", s.lastSeenAt, now: c.now, t)
                        + [.text(s.ip.map { " · " + t("security.sessions.from", ["ip": $0]) } ?? "")]),
            ]
            if !here {
                children.append(
                    Self.accountForm(
                        "/account/sessions/end", c,
                        [
                            HostedPage.hidden("session", s.id.raw),
                            HostedPage.button(
                                t("security.sessions.end", ["device": DeviceName.describe(userAgent: s.userAgent)]),
                                kind: "secondary"),
                        ]))
            }
            items.append(.element("li", [:], children))
        }
        var section: [HTML] = [
            .element("h2", ["id": "h-sessions"], [.text(t("security.sessions.heading"))]),
            .element("ul", ["class": "list"], items),
        ]
        if live.count > 1 {
            section.append(
                Self.accountForm(
                    "/account/sessions/end", c,
                    [
                        HostedPage.hidden("session", "others"),
                        HostedPage.button(t("security.sessions.end_others"), kind: "secondary"),
                    ], class: "actions"))
        }
        return .element("section", ["aria-labelledby": "h-sessions"], section)
    }

    private func eventsSection(_ events: [AuditLog.Entry], _ c: AccountContext) -> HTML {
        let t = c.frame.text
        let items: [HTML] = events.map { e in
            var place: [HTML] = [Self.ago(Int64(e.at.timeIntervalSince1970 * 1000), now: c.now, t)]
            // An operator's action is recorded with the operator's own address and browser: not the user's to see.
            let byOperator = e.kind.hasPrefix("admin.")
            if !byOperator, e.userAgent != nil || e.ip != nil {
                place.insert(.text(DeviceName.describe(userAgent: e.userAgent) + " · "), at: 0)
            }
            if !byOperator, let ip = e.ip { place.append(.text(" · " + t("security.sessions.from", ["ip": ip]))) }
            return .element(
                "li", [:],
                [
                    .element(
                        "strong", [:], [.text(t("security.event." + e.kind.replacingOccurrences(of: ".", with: "_")))]),
                    .element("p", ["class": "hint"], place),
                ])
        }
        return .element(
            "section", ["aria-labelledby": "h-events"],
            [
                .element("h2", ["id": "h-events"], [.text(t("security.events.heading"))]),
                items.isEmpty
                    ? HostedPage.paragraph(t("security.events.none")) : .element("ul", ["class": "list"], items),
            ])
    }
}
