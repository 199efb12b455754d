import Core
import Crypto
import Foundation
import HTTP
import JOSE
import Store

/// Dynamic client registration (RFC 7591, `POST /register`) and its
/// management protocol (RFC 7592, `GET`/`PUT`/`DELETE /register/{id}` with
/// the registration access token). Off unless the operator turns it on:
/// with an initial access token, or open to anyone (agent clients). An open
/// registration never yields `client_credentials` (every token such a client
/// gets needs a user's sign-in and consent), is limited per address, and
/// stops at a cap.
struct RegistrationRoutes: Sendable {
    let clients: ClientService
    let transactions: Transactions
    let clock: Clock
    let mode: Configuration.Registration
    let initialToken: String?
    let maxClients: Int
    let issuer: String
    /// Registrations per client address: 10 at once, then one every 6 minutes.
    static let perIP = RateLimiter.Limit(burst: 10, rate: 1.0 / 360)

    func register(on router: inout Router) {
        guard mode != .off else { return }
        router.add("POST", "/register", execution: .database, create)
        router.add("GET", "/register/:id", execution: .database, read)
        router.add("PUT", "/register/:id", execution: .database, update)
        router.add("DELETE", "/register/:id", execution: .database, delete)
    }

    private static func error(_ code: String, _ description: String, status: Int = 400) -> Response {
        TokenRoutes.json(["error": .string(code), "error_description": .string(description)], status: status)
    }

    /// A body read as a draft, or the answer that refuses it.
    private enum Parsed {
        case success(ClientService.Draft)
        case failure(Response)
    }

    /// The metadata of a JSON body as a draft (`ClientMetadataJSON`), refused in RFC 7591's terms.
    private func draft(_ request: Request) -> Parsed {
        let d: ClientService.Draft
        do {
            d = try ClientMetadataJSON.draft(request.body, by: .dynamic)
        } catch .invalidFields(let fields) {
            return .failure(Self.refusal(fields))
        } catch {
            return .failure(Self.error("invalid_client_metadata", "The body must be a JSON object of metadata."))
        }
        if mode == .open, d.grantTypes?.contains("client_credentials") == true {
            return .failure(
                Self.error("invalid_client_metadata", "Open registration does not offer client_credentials."))
        }
        return .success(d)
    }

    /// `POST /register`.
    func create(_ request: Request) throws -> Response {
        if mode == .token {
            guard let presented = request.bearerToken, let initialToken, ConstantTime.equals(presented, initialToken)
            else { return TokenRoutes.bearerError("invalid_token") }
        }
        let audit = AuditContext(request)
        let now = clock.now().millis
        let refusal = try transactions.write { db -> Response? in
            if let wait = try RateLimiter.take(
                "register:ip:\(audit.clientKey)", limit: Self.perIP, nowMillis: now, on: db)
            {
                var r = Self.error("temporarily_unavailable", "Too many registrations from this address.", status: 429)
                r.headers.append(("Retry-After", String(wait)))
                return r
            }
            if try ClientRepository.dynamicCount(on: db) >= maxClients {
                return Self.error("access_denied", "This server accepts no more self-registered clients.", status: 403)
            }
            return nil
        }
        if let refusal { return refusal }
        let d: ClientService.Draft
        switch draft(request) {
        case .failure(let response): return response
        case .success(let value): d = value
        }
        do {
            let registered = try clients.create(d, by: .dynamic, client: audit, actor: "dynamic:\(audit.ip)")
            return answer(
                registered.client, secret: registered.secret, token: registered.registrationToken, status: 201)
        } catch CommonFailure.invalidFields(let fields) {
            return Self.refusal(fields)
        }
    }

    /// RFC 7591 §3.2.2: `invalid_redirect_uri` when a redirect URI is the problem, `invalid_client_metadata` else.
    static func refusal(_ fields: [FieldProblem]) -> Response {
        let text = fields.map { "\($0.name) \($0.reason)" }.joined(separator: "; ")
        let code = fields.contains { $0.name == "redirect_uris" } ? "invalid_redirect_uri" : "invalid_client_metadata"
        return error(code, text)
    }

    private func answer(_ client: OIDCClient, secret: String?, token: String?, status: Int) -> Response {
        var object = ClientMetadataJSON.object(client)
        object.removeValue(forKey: "first_party")
        object.removeValue(forKey: "profile_in_id_token")
        object["registration_client_uri"] = "\(issuer)/register/\(client.id)"
        if let secret {
            object["client_secret"] = secret
            object["client_secret_expires_at"] = 0
        }
        if let token { object["registration_access_token"] = token }
        return Response(
            status: status, headers: [("Content-Type", "application/json"), ("Pragma", "no-cache")],
            body: ClientMetadataJSON.serialize(object))
    }

    /// The client the registration access token is for, when it names the one in the path (RFC 7592 §2).
    private func managed(_ request: Request) throws -> OIDCClient? {
        guard let token = request.bearerToken, SessionToken.isWellFormed(token) else { return nil }
        let client = try transactions.read {
            try ClientRepository.find(registrationTokenHash: SHA256.hex(token), on: $0)
        }
        guard let client, client.id == request.parameters["id"] else { return nil }
        return client
    }

    /// `GET /register/{id}`.
    func read(_ request: Request) throws -> Response {
        guard let client = try managed(request) else { return TokenRoutes.bearerError("invalid_token") }
        return answer(client, secret: nil, token: nil, status: 200)
    }

    /// `PUT /register/{id}`: the whole metadata again (RFC 7592 §2.2).
    func update(_ request: Request) throws -> Response {
        guard let client = try managed(request) else { return TokenRoutes.bearerError("invalid_token") }
        let d: ClientService.Draft
        switch draft(request) {
        case .failure(let response): return response
        case .success(let value): d = value
        }
        do {
            let updated = try clients.update(client.id, with: d, client: AuditContext(request), actor: "dynamic:self")
            return answer(updated, secret: nil, token: nil, status: 200)
        } catch CommonFailure.invalidFields(let fields) {
            return Self.refusal(fields)
        } catch ClientFailure.needsSecret {
            return Self.error("invalid_client_metadata", "A client cannot move to a secret it was not given.")
        }
    }

    /// `DELETE /register/{id}`.
    func delete(_ request: Request) throws -> Response {
        guard let client = try managed(request) else { return TokenRoutes.bearerError("invalid_token") }
        try clients.delete(client.id, client: AuditContext(request), actor: "dynamic:self")
        return .noContent
    }
}
