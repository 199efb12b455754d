import API
import Core
import Foundation
import HTTP

/// Webhook endpoints in the admin API. Reads need a read key, changes a write key; changes are audited by
/// `WebhookService` as `admin=<name>`, reads as `admin.read`.
/// - `GET /admin/v1/webhooks`, `GET /admin/v1/webhooks/{id}` (with its undelivered and failed counts);
/// - `POST /admin/v1/webhooks` {url, event_types, description?, personal_data?, enabled?}: 201 with the
///   `secret` shown once;
/// - `PATCH /admin/v1/webhooks/{id}`: the members given change (`enabled: true` resumes a disabled endpoint);
/// - `POST /admin/v1/webhooks/{id}/rotate-secret`: the new `secret`, once; the old one signs for a day more;
/// - `DELETE /admin/v1/webhooks/{id}`: with its undelivered messages.
extension AdminRoutes {
    func registerWebhooks(on routes: inout APIRoutes) {
        routes.add("GET", "/admin/v1/webhooks") { request in
            let actor = try authenticate(request, needs: .read)
            return Self.webhookJSON(["webhooks": try admin.webhooks(actor: actor).map(\.object)])
        }
        routes.add("GET", "/admin/v1/webhooks/:id") { request in
            let actor = try authenticate(request, needs: .read)
            let (endpoint, undelivered, failed) = try admin.webhook(request.parameters["id"] ?? "", actor: actor)
            var object = endpoint.object
            object["undelivered"] = undelivered
            object["failed"] = failed
            return Self.webhookJSON(object)
        }
        routes.add("POST", "/admin/v1/webhooks") { request in
            let actor = try authenticate(request, needs: .write)
            let registered = try webhooks.create(
                try Self.webhookDraft(request), audit: actor.client, actor: "admin=\(actor.name)")
            var object = registered.endpoint.object
            object["secret"] = registered.secret
            return Self.webhookJSON(object, status: 201)
        }
        routes.add("PATCH", "/admin/v1/webhooks/:id") { request in
            let actor = try authenticate(request, needs: .write)
            let updated = try webhooks.update(
                request.parameters["id"] ?? "", with: try Self.webhookDraft(request), audit: actor.client,
                actor: "admin=\(actor.name)")
            return Self.webhookJSON(updated.object)
        }
        routes.add("POST", "/admin/v1/webhooks/:id/rotate-secret") { request in
            let actor = try authenticate(request, needs: .write)
            let id = request.parameters["id"] ?? ""
            let secret = try webhooks.rotateSecret(id, audit: actor.client, actor: "admin=\(actor.name)")
            return Self.webhookJSON(["id": id, "secret": secret])
        }
        routes.add("DELETE", "/admin/v1/webhooks/:id") { request in
            let actor = try authenticate(request, needs: .write)
            try webhooks.delete(request.parameters["id"] ?? "", audit: actor.client, actor: "admin=\(actor.name)")
            return .noContent
        }
    }

    /// The body as a draft: members left out stay as they are.
    /// - Throws: 415 unless declared as JSON, 400 `malformed_json`, 422 `invalid_fields` naming each member.
    private static func webhookDraft(_ request: Request) throws -> WebhookService.Draft {
        let contentType = request.header("content-type")?.split(separator: ";").first.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        guard contentType == "application/json" else { throw HTTPProblem.unsupportedMediaType }
        guard let parsed = try? JSONSerialization.jsonObject(with: Data(request.body)) else {
            throw HTTPProblem.malformedJSON
        }
        guard let object = parsed as? [String: Any] else {
            throw CommonFailure.invalid("body", "must be a JSON object")
        }
        var draft = WebhookService.Draft()
        var problems: [FieldProblem] = []
        for (name, value) in object {
            switch (name, value) {
            case ("url", let v as String): draft.url = v
            case ("description", let v as String): draft.description = v
            case ("event_types", let v as [String]): draft.eventTypes = v
            // JSONSerialization reads true and false as NSNumber: only those two are booleans here.
            case ("personal_data", let v as Bool) where Self.isBoolean(value): draft.personalData = v
            case ("enabled", let v as Bool) where Self.isBoolean(value): draft.enabled = v
            case ("url", _), ("description", _):
                problems.append(FieldProblem(name: name, reason: "must be a string"))
            case ("event_types", _):
                problems.append(FieldProblem(name: name, reason: "must be an array of event type names"))
            case ("personal_data", _), ("enabled", _):
                problems.append(FieldProblem(name: name, reason: "must be true or false"))
            default:
                problems.append(FieldProblem(name: name, reason: "is not a member of a webhook endpoint"))
            }
        }
        guard problems.isEmpty else { throw CommonFailure.invalidFields(problems.sorted { $0.name < $1.name }) }
        return draft
    }

    /// Whether `value` was `true` or `false` in the JSON (not 0 or 1).
    private static func isBoolean(_ value: Any) -> Bool {
        guard let number = value as? NSNumber else { return false }
        return String(cString: number.objCType) == "c"
    }

    /// `object` as a JSON answer.
    private static func webhookJSON(_ object: [String: Any], status: Int = 200) -> Response {
        Response(
            status: status, headers: [("Content-Type", "application/json")], body: ClientMetadataJSON.serialize(object))
    }
}

extension WebhookFailure: APIFailure {
    var problem: APIError {
        switch self {
        case .notFound: .webhookNotFound
        case .noKeyFile: .webhooksUnavailable
        }
    }
}
