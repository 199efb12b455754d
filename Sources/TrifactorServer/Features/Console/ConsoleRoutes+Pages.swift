import Core
import Foundation
import HTTP
import WebUI

/// The console's dashboard, audit log and webhooks, each read through its own feature's service.
extension ConsoleRoutes {
    /// `GET /console`: counts, the search box and the charts.
    func dashboard(_ request: Request, _ s: Staffed) throws -> Response {
        let c = try admin.counts()
        return render(
            "Operator's console", s,
            [
                searchForm(""),
                ConsolePage.section(
                    "At a glance", id: "counts",
                    [
                        ConsolePage.summary([
                            ("Accounts", String(c.users)), ("Disabled accounts", String(c.disabled)),
                            ("Staff", String(c.staff)), ("Audit events, last 24 hours", String(c.auditDay)),
                        ])
                    ]),
                try charts(request, s),
            ])
    }

    // MARK: - Audit log

    /// `GET /console/audit?kind=&user=&before=`: the audit log newest first, 50 a page, keyset paging on `seq`.
    func auditPage(_ request: Request, _ s: Staffed) throws -> Response {
        let q = request.query
        let kind = q["kind"].flatMap { $0.isEmpty ? nil : $0 }
        var user = q["user"].map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
        // An address is taken for the account it names (the audit log keeps ids, never addresses).
        if let typed = user, typed.contains("@") {
            let found = try admin.find(
                email: typed, id: nil, phone: nil, actor: .staff(s.caller.user.id, client: AuditContext(request)))
            guard let account = found.first else {
                return render(
                    "Audit log", s, status: 404,
                    [
                        HostedPage.paragraph("No account has the email “\(typed)”: nothing to show.", class: "error"),
                        HostedPage.actions([HostedPage.link("The whole audit log", "/console/audit", class: "button")]),
                    ])
            }
            user = account.id.raw
        } else {
            user = user?.lowercased()
        }
        let before = q["before"].flatMap { Int64($0) }.flatMap { $0 > 0 ? $0 : nil }
        var body: [HTML] = [
            ConsolePage.search(
                "/console/audit",
                [
                    HostedPage.select(
                        "Kind", name: "kind",
                        options: [("", "Every kind")] + AuditEventKind.allCases.map { ($0.rawValue, $0.rawValue) },
                        selected: kind ?? ""),
                    HostedPage.field("User id or email", name: "user", value: user, required: false),
                    HostedPage.button("Filter"),
                ])
        ]
        guard kind.map({ AuditEventKind(rawValue: $0) != nil }) ?? true else {
            body.append(
                HostedPage.paragraph(
                    "“\(kind ?? "")” is not an audit event kind: choose one from the list.", class: "error"))
            return render("Audit log", s, status: 422, body)
        }
        let entries = try admin.auditPage(
            user: user, kind: kind, before: before, limit: Self.auditPageSize,
            actor: .staff(s.caller.user.id, client: AuditContext(request)))
        body.append(auditTable(entries, caption: "Audit events, newest first"))
        var pager: [HTML] = []
        let filters = [("kind", kind), ("user", user)].compactMap { k, v in
            v.map { "\(k)=\(Self.encoded($0))" }
        }
        if before != nil {
            pager.append(
                HostedPage.link(
                    "Newest events", "/console/audit" + (filters.isEmpty ? "" : "?" + filters.joined(separator: "&"))))
        }
        if entries.count == Self.auditPageSize, let last = entries.last?.seq {
            pager.append(
                HostedPage.link(
                    "Older events", "/console/audit?" + (filters + ["before=\(last)"]).joined(separator: "&"),
                    class: "button secondary"))
        }
        body.append(.element("nav", ["class": "pager", "aria-label": "Pages"], pager))
        return render("Audit log", s, body)
    }

    /// Audit entries as a table; a user's id links to their page.
    func auditTable(_ entries: [AuditLog.Entry], caption: String) -> HTML {
        ConsolePage.table(
            caption, ["#", "Time", "Kind", "Outcome", "User", "Detail"],
            entries.map { e in
                [
                    .text(String(e.seq)), .text(Self.time(e.at)), .text(e.kind), .text(e.outcome),
                    e.userID.map { HostedPage.link($0, "/console/users/\($0)") } ?? .text("—"),
                    .text(e.detail ?? ""),
                ]
            }, empty: "No audit events.")
    }

    // MARK: - Lists

    /// `GET /console/webhooks`: the endpoints, with enable and disable for the `write` role.
    func webhooksPage(_ request: Request, _ s: Staffed) throws -> Response {
        let all = try admin.webhooks(actor: .staff(s.caller.user.id, client: AuditContext(request)))
        let done = request.query["done"].map {
            $0 == "enabled" ? "The endpoint is enabled." : "The endpoint is disabled."
        }
        return render(
            "Webhooks", s, notice: done,
            [
                ConsolePage.table(
                    "Webhook endpoints", ["URL", "Events", "State", "Change"],
                    all.map { e in
                        [
                            .text(e.url), .text(e.eventTypes.joined(separator: " ")),
                            .text(e.status.rawValue + (e.disabledReason.map { " (\($0))" } ?? "")),
                            webhookControl(e, s),
                        ]
                    }, empty: "There are no webhook endpoints: trifactord webhooks create registers one.")
            ])
    }

    /// An endpoint's switch: nothing for `read`, "Confirm it's you" without a fresh proof, else a reason and a button.
    private func webhookControl(_ e: WebhookEndpoint, _ s: Staffed) -> HTML {
        guard s.canWrite else { return .text("—") }
        guard s.proven else { return HostedPage.link("Confirm it's you", Self.confirmLink("/console/webhooks")) }
        let enable = e.status != .enabled
        return ConsolePage.form(
            "/console/webhooks/\(e.id)", csrf: s.csrf,
            [
                HostedPage.field(
                    "Reason", name: "reason", hint: "Goes into the audit log", maxlength: 200, id: "reason-\(e.id)"),
                HostedPage.button(
                    enable ? "Enable" : "Disable", name: "status", value: enable ? "enabled" : "disabled",
                    kind: "secondary"),
            ])
    }

    /// `POST /console/webhooks/<id>`: enables or disables an endpoint through `WebhookService.update`.
    func webhookAction(_ request: Request) throws -> Response {
        let back = "/console/webhooks"
        let (s, form): (Staffed, Form)
        switch try checkWrite(request, back: back) {
        case .answered(let answer): return answer
        case .allowed(let staffed, let sent): (s, form) = (staffed, sent)
        }
        let reason = (form["reason"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard let status = form["status"], ["enabled", "disabled"].contains(status), Self.reasonProblem(reason) == nil
        else {
            return render(
                "Give a reason", s, status: 422,
                [
                    HostedPage.paragraph("Nothing was changed: every change needs a reason of up to 200 characters."),
                    HostedPage.actions([HostedPage.link("Back to webhooks", back, class: "button primary")]),
                ])
        }
        var draft = WebhookService.Draft()
        draft.enabled = status == "enabled"
        let actor = AdminService.Actor.staff(s.caller.user.id, client: AuditContext(request), reason: reason)
        do {
            _ = try webhooks.update(
                request.parameters["id"] ?? "", with: draft, audit: actor.client,
                actor: Self.actorLine(actor))
        } catch WebhookFailure.notFound {
            return notFound(
                s, "There is no such webhook endpoint: nothing was changed.", back: ("Back to webhooks", back))
        }
        return Response(status: 303, headers: [("Location", "\(back)?done=\(status)")])
    }
}
