import Core
import Foundation
import HTTP
import WebUI

/// The console's account pages: search by email, id or phone; one account with its factors, sessions and recent
/// audit entries; and the actions on it, through `AdminService` as the admin API calls it.
extension ConsoleRoutes {
    /// What a staff member with the `write` role may do to an account: (form value, button, done sentence).
    static let actions: [(action: String, button: String, done: String)] = [
        ("disable", "Disable account", "The account is disabled and its sessions ended."),
        ("enable", "Enable account", "The account may sign in again."),
        ("revoke-sessions", "End all sessions", "Every session of the account has ended."),
        ("reset-mfa", "Reset second factors", "The second factors are removed and the user was emailed."),
        ("verify-email", "Mark email verified", "The email is marked verified."),
    ]

    /// `GET /console/users?q=`: accounts by exact email, id or phone number.
    func search(_ request: Request, _ s: Staffed) throws -> Response {
        let q = (request.query["q"] ?? "").trimmingCharacters(in: .whitespaces)
        var body: [HTML] = [searchForm(q)]
        guard !q.isEmpty else { return render("Users", s, body) }
        let digits = q.filter(\.isNumber)
        let isPhone = q.first == "+" || (!digits.isEmpty && q.allSatisfy { $0.isNumber || " -()".contains($0) })
        let users: [UserRecord]
        do {
            users = try admin.find(
                email: q.contains("@") ? q : nil, id: !q.contains("@") && !isPhone ? q : nil,
                phone: isPhone && !q.contains("@") ? q : nil,
                actor: .staff(s.caller.user.id, client: AuditContext(request)))
        } catch CommonFailure.invalidFields(let fields) {
            let reason = fields.first?.reason ?? "is not valid"
            body.append(HostedPage.paragraph("“\(q)” cannot be searched: it \(reason).", class: "error"))
            return render("Users", s, status: 422, body)
        }
        body.append(
            ConsolePage.table(
                "Accounts matching “\(q)”", ["Email", "Name", "State", "Created"],
                users.map { u in
                    [
                        HostedPage.link(u.email, "/console/users/\(u.id.raw)"), .text(u.displayName ?? "—"),
                        .text(Self.state(u)), .text(Self.time(u.createdAt)),
                    ]
                }, empty: "No account has the email, id or phone number “\(q)”."))
        return render("Users", s, body)
    }

    /// The search box (on the dashboard too).
    func searchForm(_ q: String) -> HTML {
        ConsolePage.search(
            "/console/users",
            [
                HostedPage.field(
                    "Find a user", name: "q", type: "search", value: q, hint: "An exact email, user id or phone number",
                    required: false),
                HostedPage.button("Search"),
            ])
    }

    /// Whether the account may sign in and whether its email is verified, in words.
    static func state(_ u: UserRecord) -> String {
        [u.disabledAt == nil ? "active" : "disabled", u.emailVerifiedAt == nil ? "email unverified" : "email verified"]
            .joined(separator: ", ")
    }

    /// `GET /console/users/<id>`: the account, its factors, passkeys, devices, live sessions and recent audit entries.
    func userPage(_ request: Request, _ s: Staffed) throws -> Response {
        let done = request.query["done"].flatMap { d in Self.actions.first { $0.action == d }?.done }
        return try userPage(request, s, notice: done)
    }

    /// The account's page with `notice` above it, and `reasonError` next to the reason field (then a 422).
    func userPage(_ request: Request, _ s: Staffed, notice: String?, reasonError: String? = nil) throws -> Response {
        let id = request.parameters["id"] ?? ""
        let actor = AdminService.Actor.staff(s.caller.user.id, client: AuditContext(request))
        let shown: (UserRecord, [Factor], [SessionRecord])
        do {
            shown = try admin.show(UserID(id), actor: actor)
        } catch AdminFailure.userNotFound {
            return notFound(
                s, "There is no account with the id “\(id)”: it may have been deleted.",
                back: ("Find a user", "/console/users"))
        }
        let (user, factors, sessions) = shown
        let events = try admin.auditPage(user: user.id.raw, kind: nil, before: nil, limit: 20, actor: actor)
        let factorRows = { (kinds: (Factor) -> Bool) in
            factors.filter(kinds).map { f -> [HTML] in
                [
                    .text(f.displayName), .text(f.kind.rawValue), .text(Self.time(f.createdAt)),
                    .text(Self.time(f.lastUsedAt)),
                ]
            }
        }
        let factorHeaders = ["Name", "Kind", "Added", "Last used"]
        var body: [HTML] = [
            ConsolePage.section(
                "Account", id: "account",
                [
                    ConsolePage.summary([
                        ("Email", user.email), ("Name", user.displayName ?? "—"), ("User id", user.id.raw),
                        ("State", Self.state(user)), ("Created", Self.time(user.createdAt)),
                        ("Disabled", Self.time(user.disabledAt)),
                    ])
                ]),
            ConsolePage.section(
                "Second factors", id: "factors",
                [
                    ConsolePage.table(
                        "Second factors", factorHeaders, factorRows { $0.kind != .device && $0.kind != .passkey },
                        empty: "No second factor.")
                ]),
            ConsolePage.section(
                "Passkeys", id: "passkeys",
                [ConsolePage.table("Passkeys", factorHeaders, factorRows { $0.kind == .passkey }, empty: "No passkey.")]
            ),
            ConsolePage.section(
                "Devices", id: "devices",
                [ConsolePage.table("Devices", factorHeaders, factorRows { $0.kind == .device }, empty: "No device.")]),
            ConsolePage.section(
                "Live sessions", id: "sessions",
                [
                    ConsolePage.table(
                        "Live sessions", ["Device", "Level", "Signed in", "Last seen", "Address"],
                        sessions.map { x in
                            [
                                .text(DeviceName.describe(userAgent: x.userAgent)),
                                .text(x.methods.map(\.rawValue).joined(separator: " + ")),
                                .text(Self.time(x.createdAt)),
                                .text(Self.time(x.lastSeenAt)), .text(x.ip ?? "—"),
                            ]
                        }, empty: "No live session.")
                ]),
            actionsSection(user, s, reasonError: reasonError),
            ConsolePage.section(
                "Recent audit events", id: "events",
                [
                    auditTable(events, caption: "Recent audit events of this account"),
                    HostedPage.link("All of this account's events", "/console/audit?user=\(user.id.raw)"),
                ]),
        ]
        body.insert(HostedPage.paragraph(user.email, class: "hint"), at: 0)
        return render(user.displayName ?? user.email, s, notice: notice, status: reasonError == nil ? 200 : 422, body)
    }

    /// The actions, for what the staff member may do: none for `read`; "Confirm it's you" without a fresh
    /// hardware-bound proof; otherwise a reason and a button per action.
    func actionsSection(_ user: UserRecord, _ s: Staffed, reasonError: String?) -> HTML {
        let page = "/console/users/\(user.id.raw)"
        guard s.canWrite else {
            return ConsolePage.section(
                "Actions", id: "actions",
                [HostedPage.paragraph("Your staff role is read-only: you can look up this account, not change it.")])
        }
        guard s.proven else {
            return ConsolePage.section(
                "Actions", id: "actions",
                [
                    HostedPage.paragraph(
                        "Changing an account needs your passkey or device key, used within the last 5 minutes."),
                    HostedPage.actions([
                        HostedPage.link("Confirm it's you", Self.confirmLink(page), class: "button primary")
                    ]),
                ])
        }
        let offered = Self.actions.filter { a in
            switch a.action {
            case "disable": user.disabledAt == nil
            case "enable": user.disabledAt != nil
            case "verify-email": user.emailVerifiedAt == nil
            default: true
            }
        }
        return ConsolePage.section(
            "Actions", id: "actions",
            [
                ConsolePage.form(
                    page, csrf: s.csrf,
                    [
                        HostedPage.field(
                            "Reason", name: "reason", error: reasonError,
                            hint: "Why you are doing this (up to 200 characters): it goes into the audit log.",
                            maxlength: 200),
                        HostedPage.actions(
                            offered.map { a in
                                HostedPage.button(
                                    a.button, name: "action", value: a.action,
                                    kind: ["disable", "reset-mfa"].contains(a.action) ? "danger" : "secondary")
                            }),
                    ])
            ])
    }

    /// `POST /console/users/<id>`: one action with its reason; answered by the account's page (Post/Redirect/Get).
    func userAction(_ request: Request) throws -> Response {
        let id = request.parameters["id"] ?? ""
        let page = "/console/users/\(id)"
        let (s, form): (Staffed, Form)
        switch try checkWrite(request, back: page) {
        case .answered(let answer): return answer
        case .allowed(let staffed, let sent): (s, form) = (staffed, sent)
        }
        guard let action = form["action"], Self.actions.contains(where: { $0.action == action }) else {
            return try userPage(request, s, notice: "Choose one of the action buttons.")
        }
        let reason = (form["reason"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        if let problem = Self.reasonProblem(reason) {
            return try userPage(request, s, notice: nil, reasonError: problem)
        }
        let actor = AdminService.Actor.staff(s.caller.user.id, client: AuditContext(request), reason: reason)
        let target = UserID(id)
        // Staff do not act on their own account (a self-verified email, a self-lockout) nor on another staff
        // member's (disabling or resetting one is taking their staff role outside `trifactord staff`, on the host).
        let isStaff = try staff.member(target) != nil
        if target == s.caller.user.id || isStaff {
            let own = target == s.caller.user.id
            let now = admin.clock.now().millis
            try admin.transactions.write { db in
                try AuditLog.append(
                    AuditContext(request).event(
                        .staffRefused, .denied, userID: s.caller.user.id,
                        detail:
                            "admin=staff:\(s.caller.user.id.raw) \(own ? "own account" : "staff account"): \(action)"),
                    at: now, on: db)
            }
            return render(
                own ? "Not on your own account" : "Not on a staff account", s, status: 403,
                [
                    HostedPage.paragraph(
                        own
                            ? "Nothing was changed: staff do not act on their own account here. Ask another staff member, or use the host."
                            : "Nothing was changed: this account is staff. Change it on the host (trifactord staff, trifactord users)."
                    ),
                    HostedPage.actions([HostedPage.link("Back to the account", page, class: "button primary")]),
                ])
        }
        do {
            switch action {
            case "disable": _ = try admin.disable(target, actor: actor)
            case "enable": _ = try admin.enable(target, actor: actor)
            case "revoke-sessions": _ = try admin.revokeSessions(target, actor: actor)
            case "reset-mfa": _ = try admin.resetMFA(target, actor: actor)
            default: _ = try admin.markEmailVerified(target, actor: actor)
            }
        } catch AdminFailure.userNotFound {
            return notFound(
                s, "There is no account with the id “\(id)”: nothing was changed.",
                back: ("Find a user", "/console/users"))
        }
        return Response(status: 303, headers: [("Location", "\(page)?done=\(action)")])
    }
}
