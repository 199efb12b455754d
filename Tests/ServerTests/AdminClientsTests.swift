import Core
import Crypto
import Foundation
import ServerTestSupport
import Store
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

/// The OpenID Provider's clients through the admin API (`/admin/v1/clients`),
/// with the provider off unless a test needs its token endpoint.
@Suite("Clients in the admin API")
struct AdminClientsTests {
    /// A confidential client for the code flow.
    static var web: [String: Any] {
        [
            "client_id": "billing-web", "client_name": "Billing", "redirect_uris": ["https://billing.example/cb"],
            "scope": "openid email",
        ]
    }

    /// A read key (`support-bob`) and a write key (`ops-alice`).
    static func keys(_ server: TestServer) throws -> (read: String, write: String) {
        try server.database.transaction { db in
            (
                try server.services.adminKeys.create(name: "support-bob", role: .read, on: db).token,
                try server.services.adminKeys.create(name: "ops-alice", role: .write, on: db).token
            )
        }
    }

    static func call(_ server: TestServer, _ method: String, _ path: String, _ body: [String: Any]? = nil, key: String)
        throws -> HTTPTestClient.Response
    {
        guard let body else { return try server.send(method, path, headers: ["Authorization": "Bearer \(key)"]) }
        return try server.json(method, path, body, token: key)
    }

    /// `client_credentials` at the token endpoint with HTTP Basic: the status.
    static func token(_ server: TestServer, id: String, secret: String) throws -> Int {
        let basic = Data("\(id):\(secret)".utf8).base64EncodedString()
        return try server.send(
            "POST", "/token",
            headers: ["Content-Type": "application/x-www-form-urlencoded", "Authorization": "Basic \(basic)"],
            body: Array("grant_type=client_credentials".utf8)
        ).status
    }

    @Test(
        "a write key creates a client whose secret works at the token endpoint and is shown only then: reads show neither it nor its hash",
        arguments: Backend.all)
    func create(backend: Backend) throws {
        let configuration = TestServer.configuration {
            $0.oidc = true
            $0.publicURL = URL(string: "https://id.example")
        }
        try backend.withServer(configuration) { server in
            let (read, write) = try Self.keys(server)
            let created = try Self.call(
                server, "POST", "/admin/v1/clients",
                [
                    "client_name": "Reports", "grant_types": ["client_credentials"], "scope": "reports",
                    "first_party": true,
                ],
                key: write)
            #expect(created.status == 201)
            let body = try created.wireObject()
            let id = try #require(body["client_id"] as? String)
            let secret = try #require(body["client_secret"] as? String)
            #expect(body["first_party"] as? Bool == true && body["registered_by"] as? String == "admin")
            #expect(body["grant_types"] as? [String] == ["client_credentials"])
            #expect(try Self.token(server, id: id, secret: secret) == 200)
            #expect(try Self.token(server, id: id, secret: secret + "x") == 401)

            let stored = try server.database.transaction { try ClientRepository.find(id, on: $0) }
            #expect(stored?.secretHash == SHA256.hex(secret))
            for answer in [
                try Self.call(server, "GET", "/admin/v1/clients/\(id)", key: read),
                try Self.call(server, "GET", "/admin/v1/clients", key: read),
            ] {
                #expect(answer.status == 200)
                #expect(!answer.text.contains(secret) && !answer.text.contains(SHA256.hex(secret)))
                #expect(answer.text.contains(id) && !answer.text.contains("\"client_secret\""))
            }
            let listed = try Self.call(server, "GET", "/admin/v1/clients", key: read).wireObject()
            #expect((listed["clients"] as? [[String: Any]])?.compactMap { $0["client_id"] as? String } == [id])
        }
    }

    @Test("the client routes are there while the OpenID Provider is off; a public client gets no secret")
    func providerOff() throws {
        try Backend.all[0].withServer { server in
            #expect(server.services.provider == nil)
            let (_, write) = try Self.keys(server)
            var app = Self.web
            app["client_id"] = "mobile"
            app["token_endpoint_auth_method"] = "none"
            let created = try Self.call(server, "POST", "/admin/v1/clients", app, key: write)
            #expect(created.status == 201)
            #expect(try created.wireObject()["client_secret"] == nil)
        }
    }

    @Test(
        "a read key reads clients but gets 403 admin_read_only on every write, and nothing changes",
        arguments: Backend.all)
    func readOnly(backend: Backend) throws {
        try backend.withServer { server in
            let (read, write) = try Self.keys(server)
            #expect(try Self.call(server, "POST", "/admin/v1/clients", Self.web, key: write).status == 201)
            let before = try server.database.transaction { try ClientRepository.find("billing-web", on: $0) }
            let writes: [(String, String, [String: Any]?)] = [
                ("POST", "/admin/v1/clients", ["client_id": "other", "client_name": "Other", "redirect_uris": []]),
                ("PUT", "/admin/v1/clients/billing-web", Self.web),
                ("POST", "/admin/v1/clients/billing-web/rotate-secret", nil),
                ("DELETE", "/admin/v1/clients/billing-web", nil),
            ]
            for (method, path, body) in writes {
                let answer = try Self.call(server, method, path, body, key: read)
                #expect(answer.status == 403, "\(method) \(path)")
                #expect(try answer.wireObject()["code"] as? String == "admin_read_only")
            }
            #expect(try Self.call(server, "GET", "/admin/v1/clients/billing-web", key: read).status == 200)
            let after = try server.database.transaction { try ClientRepository.all(on: $0) }
            #expect(after == [before].compactMap { $0 })
        }
    }

    @Test(
        "invalid metadata is a 422 naming each field (redirect_uris, a scope of the wrong type), and nothing is made",
        arguments: Backend.all)
    func invalid(backend: Backend) throws {
        try backend.withServer { server in
            let (_, write) = try Self.keys(server)
            let answer = try Self.call(
                server, "POST", "/admin/v1/clients",
                ["client_name": "Bad", "redirect_uris": ["http://bad.example/cb"], "scope": ["openid"]], key: write)
            #expect(answer.status == 422)
            let problem = try answer.wireObject()
            #expect(problem["code"] as? String == "invalid_fields")
            let named = (problem["invalid_params"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
            #expect(named == ["scope"])
            let uris = try Self.call(
                server, "POST", "/admin/v1/clients",
                ["client_name": "Bad", "redirect_uris": ["http://bad.example/cb"]],
                key: write)
            #expect(uris.status == 422)
            let names = (try uris.wireObject()["invalid_params"] as? [[String: Any]])?.compactMap {
                $0["name"] as? String
            }
            #expect(names == ["redirect_uris"])
            #expect(try server.database.transaction { try ClientRepository.all(on: $0) }.isEmpty)
        }
    }

    @Test(
        "an update replaces the whole metadata and keeps the id and the secret; rotate-secret changes the secret",
        arguments: Backend.all)
    func updateAndRotate(backend: Backend) throws {
        try backend.withServer { server in
            let (_, write) = try Self.keys(server)
            let created = try Self.call(server, "POST", "/admin/v1/clients", Self.web, key: write).wireObject()
            let secret = try #require(created["client_secret"] as? String)
            let hash = {
                try server.database.transaction { try ClientRepository.find("billing-web", on: $0) }?.secretHash
            }

            let updated = try Self.call(
                server, "PUT", "/admin/v1/clients/billing-web",
                ["client_name": "Billing 2", "redirect_uris": ["https://billing.example/return"]], key: write)
            #expect(updated.status == 200)
            let body = try updated.wireObject()
            #expect(body["client_name"] as? String == "Billing 2" && body["client_id"] as? String == "billing-web")
            #expect(body["redirect_uris"] as? [String] == ["https://billing.example/return"])
            // What was left out took its default: every scope this provider knows.
            #expect(body["scope"] as? String == OIDCClient.knownScopes.joined(separator: " "))
            #expect(body["client_secret"] == nil)
            #expect(try hash() == SHA256.hex(secret))

            let renamed = try Self.call(
                server, "PUT", "/admin/v1/clients/billing-web", ["client_id": "billing-2", "client_name": "X"],
                key: write)
            #expect(renamed.status == 422)

            let rotated = try Self.call(server, "POST", "/admin/v1/clients/billing-web/rotate-secret", key: write)
            #expect(rotated.status == 200)
            let fresh = try #require(try rotated.wireObject()["client_secret"] as? String)
            #expect(try rotated.wireObject()["client_id"] as? String == "billing-web")
            #expect(fresh != secret)
            #expect(try hash() == SHA256.hex(fresh))

            var app = Self.web
            app["client_id"] = "mobile"
            app["token_endpoint_auth_method"] = "none"
            #expect(try Self.call(server, "POST", "/admin/v1/clients", app, key: write).status == 201)
            let none = try Self.call(server, "POST", "/admin/v1/clients/mobile/rotate-secret", key: write)
            #expect(none.status == 409)
            #expect(try none.wireObject()["code"] as? String == "client_has_no_secret")
        }
    }

    @Test(
        "a deleted client is gone (404 client_not_found afterwards); an id taken is 409 client_exists",
        arguments: Backend.all)
    func delete(backend: Backend) throws {
        try backend.withServer { server in
            let (read, write) = try Self.keys(server)
            #expect(try Self.call(server, "POST", "/admin/v1/clients", Self.web, key: write).status == 201)
            let again = try Self.call(server, "POST", "/admin/v1/clients", Self.web, key: write)
            #expect(again.status == 409)
            #expect(try again.wireObject()["code"] as? String == "client_exists")

            #expect(try Self.call(server, "DELETE", "/admin/v1/clients/billing-web", key: write).status == 204)
            for (method, path, key) in [
                ("GET", "/admin/v1/clients/billing-web", read), ("DELETE", "/admin/v1/clients/billing-web", write),
                ("POST", "/admin/v1/clients/billing-web/rotate-secret", write),
            ] {
                let answer = try Self.call(server, method, path, key: key)
                #expect(answer.status == 404, "\(method) \(path)")
                #expect(try answer.wireObject()["code"] as? String == "client_not_found")
            }
            let put = try Self.call(server, "PUT", "/admin/v1/clients/billing-web", Self.web, key: write)
            #expect(put.status == 404)
        }
    }

    @Test("every write is in the audit log with the admin key's name, and reads as admin.read", arguments: Backend.all)
    func audited(backend: Backend) throws {
        try backend.withServer { server in
            let (read, write) = try Self.keys(server)
            _ = try Self.call(server, "POST", "/admin/v1/clients", Self.web, key: write)
            _ = try Self.call(server, "PUT", "/admin/v1/clients/billing-web", Self.web, key: write)
            _ = try Self.call(server, "POST", "/admin/v1/clients/billing-web/rotate-secret", key: write)
            _ = try Self.call(server, "GET", "/admin/v1/clients/billing-web", key: read)
            _ = try Self.call(server, "DELETE", "/admin/v1/clients/billing-web", key: write)
            #expect(try server.auditDetails("oidc.client_created") == ["client=billing-web by=admin=ops-alice"])
            #expect(
                try server.auditDetails("oidc.client_updated") == [
                    "client=billing-web by=admin=ops-alice", "client=billing-web secret rotated by=admin=ops-alice",
                ])
            #expect(try server.auditDetails("oidc.client_deleted") == ["client=billing-web by=admin=ops-alice"])
            #expect(try server.auditDetails("admin.read").contains("admin=support-bob client=billing-web"))
        }
    }

    @Test(
        "the one reader of client metadata ignores an operator's fields from a self-registered client and names every member of the wrong type"
    )
    func sharedReader() throws {
        let body = Array(
            #"{"client_id":"mine","first_party":true,"profile_in_id_token":true,"client_name":"App","logo_uri":null}"#
                .utf8)
        let dynamic = try ClientMetadataJSON.draft(body, by: .dynamic)
        #expect(dynamic.id == nil && !dynamic.firstParty && !dynamic.profileInIDToken && dynamic.name == "App")
        let admin = try ClientMetadataJSON.draft(body, by: .admin)
        #expect(admin.id == "mine" && admin.firstParty && admin.profileInIDToken && admin.logoURI == nil)
        #expect(throws: ClientMetadataJSON.Refusal.malformed) {
            try ClientMetadataJSON.draft(Array("{".utf8), by: .admin)
        }
        #expect(throws: ClientMetadataJSON.Refusal.notAnObject) {
            try ClientMetadataJSON.draft(Array("[]".utf8), by: .dynamic)
        }
        let wrong = Array(
            #"{"client_name":5,"redirect_uris":"https://a.example","first_party":"yes","jwks_uri":"x"}"#.utf8)
        #expect(
            throws: ClientMetadataJSON.Refusal.invalidFields([
                .init(name: "first_party", reason: "must be true or false"),
                .init(name: "client_name", reason: "must be a string"),
                .init(name: "redirect_uris", reason: "must be an array of strings"),
                .init(name: "jwks_uri", reason: "is not supported: send jwks"),
            ])
        ) { try ClientMetadataJSON.draft(wrong, by: .admin) }
        // A client without the code grant may say it has no response types (as a client's JSON says it).
        let credentials = Array(#"{"grant_types":["client_credentials"],"response_types":[]}"#.utf8)
        #expect(try ClientMetadataJSON.draft(credentials, by: .admin).grantTypes == ["client_credentials"])
    }
}
