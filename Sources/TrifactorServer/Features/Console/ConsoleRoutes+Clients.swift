import Core
import Foundation
import HTTP
import WebUI

/// The console's OpenID Provider clients: the list and a client's page for every staff member; for the `write` role,
/// rotating a secret-based client's secret and deleting a client, through `ClientService` as the admin API calls it,
/// audited with the staff member's reason. Registering and changing clients stays with `trifactord clients` and the
/// admin API. The built-in client of the hosted pages (`OwnPages`) is never listed here nor found by its id.
extension ConsoleRoutes {
    /// `GET /console/clients`: the relying parties, each name leading to its page.
    func clientsPage(_ request: Request, _ s: Staffed) throws -> Response {
        let all = try admin.clients(actor: .staff(s.caller.user.id, client: AuditContext(request))).filter {
            !OwnPages.isBuiltIn($0.id)
        }
        let done = request.query["done"] == "deleted" ? "The client is deleted, with everything issued to it." : nil
        return render(
            "Clients", s, notice: done,
            [
                ConsolePage.table(
                    "Clients", ["Name", "Client id", "Authentication", "Redirect URIs", "First party"],
                    all.map { c in
                        [
                            HostedPage.link(c.name, Self.clientPath(c.id)), .text(c.id), .text(c.authMethod.rawValue),
                            .text(c.redirectURIs.joined(separator: " ")), .text(c.firstParty ? "yes" : "no"),
                        ]
                    }, empty: "There are no clients: trifactord clients create registers one."),
                Self.clientsHint,
            ])
    }

    /// Where registering and changing clients is done, with the commands.
    static let clientsHint = HostedPage.paragraph(
        "Clients are registered and changed on the host or through the admin API, not here: trifactord clients create --name NAME --redirect-uris \"URI …\", trifactord clients update ID [options] (trifactord clients --help), or POST and PUT /admin/v1/clients.",
        class: "hint")

    /// A client's page in the console.
    static func clientPath(_ id: String) -> String { "/console/clients/" + encoded(id) }

    /// `GET /console/clients/<id>`: the client's metadata and, for the `write` role, its actions.
    func clientPage(_ request: Request, _ s: Staffed) throws -> Response {
        try clientPage(request, s, notice: nil, errors: [:])
    }

    /// The client's page with `notice` above it and `errors` next to their fields, by field id (`reason-<action>`,
    /// `confirm`): then a 422 unless `status` says otherwise.
    func clientPage(
        _ request: Request, _ s: Staffed, notice: String?, errors: [String: String], status: Int? = nil
    ) throws -> Response {
        let id = request.parameters["id"] ?? ""
        let client: OIDCClient
        do {
            client = try admin.client(id, actor: .staff(s.caller.user.id, client: AuditContext(request)))
        } catch ClientFailure.notFound {
            return notFound(
                s, "There is no client with the id “\(id)”: it may have been deleted.",
                back: ("All clients", "/console/clients"))
        }
        let list = { (items: [String]) in items.isEmpty ? "—" : items.joined(separator: ", ") }
        let yes = { (flag: Bool) in flag ? "yes" : "no" }
        return render(
            client.name, s, notice: notice, status: status ?? (errors.isEmpty ? 200 : 422),
            [
                ConsolePage.section(
                    "Client", id: "client",
                    [
                        ConsolePage.summary([
                            ("Name", client.name), ("Client id", client.id),
                            ("Redirect URIs", list(client.redirectURIs)),
                            ("Post-logout redirect URIs", list(client.postLogoutRedirectURIs)),
                            ("Grants", list(client.grantTypes.map(\.rawValue))), ("Scopes", list(client.scopes)),
                            ("Authentication", client.authMethod.rawValue), ("First party", yes(client.firstParty)),
                            ("FAPI 2.0", yes(client.fapi2)), ("DPoP-bound tokens", yes(client.dpopBound)),
                            ("Registered by", client.registeredBy.rawValue), ("Created", Self.time(client.createdAt)),
                            ("Changed", Self.time(client.updatedAt)),
                        ])
                    ]),
                clientActions(client, s, errors: errors),
                Self.clientsHint,
                HostedPage.link("All clients", "/console/clients"),
            ])
    }

    /// The client's actions, for what the staff member may do: none for `read`; "Confirm it's you" without a fresh
    /// hardware-bound proof; otherwise "Rotate secret" (secret-based clients only) and "Delete", each with a reason.
    private func clientActions(_ client: OIDCClient, _ s: Staffed, errors: [String: String]) -> HTML {
        let here = Self.clientPath(client.id)
        guard s.canWrite else {
            return ConsolePage.section(
                "Actions", id: "actions",
                [HostedPage.paragraph("Your staff role is read-only: you can look at this client, not change it.")])
        }
        guard s.proven else {
            return ConsolePage.section(
                "Actions", id: "actions",
                [
                    HostedPage.paragraph(
                        "Changing a client needs your passkey or device key, used within the last 5 minutes."),
                    HostedPage.actions([
                        HostedPage.link("Confirm it's you", Self.confirmLink(here), class: "button primary")
                    ]),
                ])
        }
        let reason = { (action: String) in
            HostedPage.field(
                "Reason", name: "reason", error: errors["reason-\(action)"],
                hint: "Why you are doing this (up to 200 characters): it goes into the audit log.", maxlength: 200,
                id: "reason-\(action)")
        }
        var forms: [HTML] = []
        if client.authMethod.usesSecret {
            forms.append(
                ConsolePage.form(
                    here, csrf: s.csrf,
                    [
                        HostedPage.paragraph(
                            "A new secret is shown once; the old one stops working at once, so the client needs the new one."
                        ),
                        reason("rotate-secret"),
                        HostedPage.button("Rotate secret", name: "action", value: "rotate-secret", kind: "secondary"),
                    ]))
        }
        forms.append(
            ConsolePage.form(
                here, csrf: s.csrf,
                [
                    HostedPage.paragraph(
                        "Deleting ends the client's grants, consents and tokens with it; it cannot be undone."),
                    HostedPage.field(
                        "Type the client id to confirm", name: "confirm", error: errors["confirm"],
                        hint: client.id, autocomplete: "off"),
                    reason("delete"),
                    HostedPage.button("Delete client", name: "action", value: "delete", kind: "danger"),
                ]))
        return ConsolePage.section("Actions", id: "actions", forms)
    }

    /// `POST /console/clients/<id>`: `action=rotate-secret` answers with the new secret, shown once on this no-store
    /// page; `action=delete` (with the client id typed again) goes back to the list. Each needs a reason.
    func clientAction(_ request: Request) throws -> Response {
        let id = request.parameters["id"] ?? ""
        let here = Self.clientPath(id)
        let (s, form): (Staffed, Form)
        switch try checkWrite(request, back: here) {
        case .answered(let page): return page
        case .allowed(let staffed, let sent): (s, form) = (staffed, sent)
        }
        guard let action = form["action"], ["rotate-secret", "delete"].contains(action) else {
            return try clientPage(request, s, notice: "Choose one of the action buttons.", errors: [:], status: 422)
        }
        let reason = (form["reason"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        if let problem = Self.reasonProblem(reason) {
            return try clientPage(request, s, notice: nil, errors: ["reason-\(action)": problem])
        }
        if action == "delete", (form["confirm"] ?? "").trimmingCharacters(in: .whitespaces) != id {
            return try clientPage(
                request, s, notice: nil, errors: ["confirm": "Type the client id, \(id), to delete it."])
        }
        let actor = AdminService.Actor.staff(s.caller.user.id, client: AuditContext(request), reason: reason)
        do {
            guard action == "rotate-secret" else {
                try clients.delete(id, client: actor.client, actor: Self.actorLine(actor))
                return Response(status: 303, headers: [("Location", "/console/clients?done=deleted")])
            }
            let secret = try clients.rotateSecret(id, client: actor.client, actor: Self.actorLine(actor))
            return render(
                "The client's new secret", s,
                [
                    HostedPage.paragraph(
                        "Copy the new secret of \(id) now: it is shown only this once. The old secret no longer works."),
                    ConsolePage.secret(secret),
                    HostedPage.actions([HostedPage.link("I have copied it", here, class: "button primary")]),
                ])
        } catch ClientFailure.notFound {
            return notFound(
                s, "There is no client with the id “\(id)”: nothing was changed.",
                back: ("All clients", "/console/clients"))
        } catch ClientFailure.noSecret {
            return try clientPage(
                request, s, notice: "This client has no secret to rotate: nothing was changed.", errors: [:],
                status: 409)
        }
    }
}
