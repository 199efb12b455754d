import API
import Core
import Foundation
import HTTP

/// The OpenID Provider's clients in the admin API, with RFC 7591's metadata
/// names. Registered whether or not the provider is on, so that an operator
/// can prepare its clients before turning it on. Changes are audited by
/// `ClientService` as `by=admin=<name>`, reads as `admin.read`.
/// - `GET /admin/v1/clients`, `GET /admin/v1/clients/{id}` (read);
/// - `POST /admin/v1/clients` (201, with the `client_secret` shown once);
/// - `PUT /admin/v1/clients/{id}`: the whole metadata again, what is left
///   out taking its default (RFC 7592 §2.2); the id and the secret stay;
/// - `POST /admin/v1/clients/{id}/rotate-secret`; `DELETE /admin/v1/clients/{id}`.
extension AdminRoutes {
    func registerClients(on routes: inout APIRoutes) {
        routes.add("GET", "/admin/v1/clients") { request in
            let actor = try authenticate(request, needs: .read)
            return Self.json(["clients": try admin.clients(actor: actor).map(ClientMetadataJSON.object)])
        }
        routes.add("GET", "/admin/v1/clients/:id") { request in
            let actor = try authenticate(request, needs: .read)
            return Self.json(ClientMetadataJSON.object(try admin.client(request.parameters["id"] ?? "", actor: actor)))
        }
        routes.add("POST", "/admin/v1/clients") { request in
            let actor = try authenticate(request, needs: .write)
            let registered = try clients.create(
                try Self.draft(request), by: .admin, client: actor.client, actor: "admin=\(actor.name)")
            var object = ClientMetadataJSON.object(registered.client)
            if let secret = registered.secret { object["client_secret"] = secret }
            return Self.json(object, status: 201)
        }
        routes.add("PUT", "/admin/v1/clients/:id") { request in
            let actor = try authenticate(request, needs: .write)
            let id = request.parameters["id"] ?? ""
            let draft = try Self.draft(request)
            if let named = draft.id, named != id {
                throw CommonFailure.invalid("client_id", "must be the id in the path: a client's id never changes")
            }
            let updated = try clients.update(id, with: draft, client: actor.client, actor: "admin=\(actor.name)")
            return Self.json(ClientMetadataJSON.object(updated))
        }
        routes.add("POST", "/admin/v1/clients/:id/rotate-secret") { request in
            let actor = try authenticate(request, needs: .write)
            let id = request.parameters["id"] ?? ""
            let secret = try clients.rotateSecret(id, client: actor.client, actor: "admin=\(actor.name)")
            return Self.json(["client_id": id, "client_secret": secret])
        }
        routes.add("DELETE", "/admin/v1/clients/:id") { request in
            let actor = try authenticate(request, needs: .write)
            try clients.delete(request.parameters["id"] ?? "", client: actor.client, actor: "admin=\(actor.name)")
            return .noContent
        }
    }

    /// The body as a draft (`ClientMetadataJSON`, as dynamic registration reads it).
    /// - Throws: 415 unless declared as JSON, 400 `malformed_json`, 422 `invalid_fields` naming each member.
    private static func draft(_ request: Request) throws -> ClientService.Draft {
        let contentType = request.header("content-type")?.split(separator: ";").first.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        guard contentType == "application/json" else { throw HTTPProblem.unsupportedMediaType }
        do {
            return try ClientMetadataJSON.draft(request.body, by: .admin)
        } catch .malformed {
            throw HTTPProblem.malformedJSON
        } catch .notAnObject {
            throw CommonFailure.invalid("body", "must be a JSON object of client metadata")
        } catch .invalidFields(let fields) {
            throw CommonFailure.invalidFields(fields)
        }
    }

    private static func json(_ object: [String: Any], status: Int = 200) -> Response {
        Response(
            status: status, headers: [("Content-Type", "application/json")], body: ClientMetadataJSON.serialize(object))
    }
}

extension ClientFailure: APIFailure {
    var problem: APIError {
        switch self {
        case .notFound: .clientNotFound
        case .idTaken: .clientExists
        case .noSecret: .clientHasNoSecret
        case .needsSecret:
            .invalidFields([
                .init(
                    name: "token_endpoint_auth_method",
                    reason: "cannot become a secret method: this client was made without a secret (make a new client)")
            ])
        }
    }
}
