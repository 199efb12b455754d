import Foundation
import Store

extension OIDCClient.AuthMethod: StoredValue {}
extension OIDCClient.GrantType: StoredValue {}
extension OIDCClient.Registrar: StoredValue {}

/// The `oidc_clients` table: the OpenID Provider's own. Redirect URIs are a
/// JSON array (a URI may hold a comma); scopes and grants a stored list.
enum ClientRepository {
    private static let columns = """
        id, name, secret_hash, auth_method, redirect_uris, post_logout_redirect_uris, grant_types, scopes, first_party,
        profile_in_id_token, jwks, logo_uri, backchannel_logout_uri, registration_token_hash, registered_by, created_at,
        updated_at, id_token_alg, fapi2, dpop_bound, ciba_mode, ciba_endpoint, ciba_text
        """

    static func insert(_ c: OIDCClient, on db: any SQLConnection) throws {
        try db.execute(
            "INSERT INTO oidc_clients (\(columns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)",
            values(c))
    }

    /// Writes a built-in client (`OwnPages`), or rewrites its fields when it is there already: every instance does
    /// so at start, so one conditional statement that two instances may run at once.
    static func upsert(_ c: OIDCClient, on db: any SQLConnection) throws {
        try db.execute(
            """
            INSERT INTO oidc_clients (\(columns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14,
              $15, $16, $17, $18, $19, $20, $21, $22, $23)
            ON CONFLICT (id) DO UPDATE SET name = excluded.name, redirect_uris = excluded.redirect_uris,
              grant_types = excluded.grant_types, scopes = excluded.scopes, first_party = excluded.first_party,
              auth_method = excluded.auth_method, secret_hash = NULL, updated_at = excluded.updated_at
            """, values(c))
    }

    /// Writes every field but the id, the registrar and the creation time; false when there is no such client.
    @discardableResult
    static func update(_ c: OIDCClient, on db: any SQLConnection) throws -> Bool {
        try db.execute(
            """
            UPDATE oidc_clients SET name = $2, secret_hash = $3, auth_method = $4, redirect_uris = $5,
              post_logout_redirect_uris = $6, grant_types = $7, scopes = $8, first_party = $9, profile_in_id_token = $10,
              jwks = $11, logo_uri = $12, backchannel_logout_uri = $13, registration_token_hash = $14, updated_at = $17,
              id_token_alg = $18, fapi2 = $19, dpop_bound = $20, ciba_mode = $21, ciba_endpoint = $22,
              ciba_text = $23
            WHERE id = $1 AND registered_by = $15 AND created_at = $16
            """, values(c)) == 1
    }

    static func find(_ id: String, on db: any SQLConnection) throws -> OIDCClient? {
        try db.queryOne("SELECT \(columns) FROM oidc_clients WHERE id = $1", [.text(id)]).map(record)
    }

    static func find(registrationTokenHash hash: String, on db: any SQLConnection) throws -> OIDCClient? {
        try db.queryOne("SELECT \(columns) FROM oidc_clients WHERE registration_token_hash = $1", [.text(hash)])
            .map(record)
    }

    /// Every client an operator registered or that registered itself, oldest first (the built-in one of
    /// `OwnPages` is not among them: nobody manages it).
    static func all(on db: any SQLConnection) throws -> [OIDCClient] {
        try db.query(
            "SELECT \(columns) FROM oidc_clients WHERE id <> $1 ORDER BY created_at, id", [.text(OwnPages.clientID)]
        ).map(record)
    }

    /// A client an operator may manage: any but the built-in one of `OwnPages`.
    static func managed(_ id: String, on db: any SQLConnection) throws -> OIDCClient? {
        OwnPages.isBuiltIn(id) ? nil : try find(id, on: db)
    }

    /// How many clients registered themselves (the cap on dynamic registration).
    static func dynamicCount(on db: any SQLConnection) throws -> Int {
        Int(try db.queryOne("SELECT COUNT(*) AS n FROM oidc_clients WHERE registered_by = 'dynamic'")?.int("n") ?? 0)
    }

    /// Deletes the client; its flows, grants and consents go with it (ON DELETE CASCADE).
    static func delete(_ id: String, on db: any SQLConnection) throws -> Bool {
        guard !OwnPages.isBuiltIn(id) else { return false }
        return try db.execute("DELETE FROM oidc_clients WHERE id = $1", [.text(id)]) == 1
    }

    private static func values(_ c: OIDCClient) -> [SQLValue] {
        [
            .text(c.id), .text(c.name), SQLValue(c.secretHash), c.authMethod.sql, .text(json(c.redirectURIs)),
            .text(json(c.postLogoutRedirectURIs)), StoredList.encode(c.grantTypes), StoredList.encode(c.scopes),
            SQLValue(c.firstParty), SQLValue(c.profileInIDToken), SQLValue(c.jwks), SQLValue(c.logoURI),
            SQLValue(c.backchannelLogoutURI), SQLValue(c.registrationTokenHash), c.registeredBy.sql, .int(c.createdAt),
            .int(c.updatedAt), .text(c.idTokenAlgorithm), SQLValue(c.fapi2), SQLValue(c.dpopBound),
            SQLValue(c.cibaMode?.rawValue), SQLValue(c.cibaEndpoint), SQLValue(c.cibaText),
        ]
    }

    private static func json(_ list: [String]) -> String {
        String(
            decoding: (try? JSONSerialization.data(withJSONObject: list, options: [.withoutEscapingSlashes]))
                ?? Data("[]".utf8), as: UTF8.self)
    }

    private static func list(_ row: Row, _ column: String) throws -> [String] {
        let text = try row.text(column)
        guard let list = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String] else {
            throw StoreError(.decoding, detail: "column \(column) holds no JSON array of strings")
        }
        return list
    }

    private static func record(_ r: Row) throws -> OIDCClient {
        OIDCClient(
            id: try r.text("id"), name: try r.text("name"), secretHash: try r.optionalText("secret_hash"),
            authMethod: try r.value("auth_method"), redirectURIs: try list(r, "redirect_uris"),
            postLogoutRedirectURIs: try list(r, "post_logout_redirect_uris"), grantTypes: try r.list("grant_types"),
            scopes: StoredList.decode(try r.text("scopes")), firstParty: try r.bool("first_party"),
            profileInIDToken: try r.bool("profile_in_id_token"), idTokenAlgorithm: try r.text("id_token_alg"),
            jwks: try r.optionalText("jwks"),
            logoURI: try r.optionalText("logo_uri"), backchannelLogoutURI: try r.optionalText("backchannel_logout_uri"),
            registrationTokenHash: try r.optionalText("registration_token_hash"),
            registeredBy: try r.value("registered_by"), createdAt: try r.int("created_at"),
            updatedAt: try r.int("updated_at"), fapi2: try r.bool("fapi2"),
            dpopBound: try r.bool("dpop_bound"),
            cibaMode: try r.optionalText("ciba_mode").flatMap(OIDCClient.CIBAMode.init(rawValue:)),
            cibaEndpoint: try r.optionalText("ciba_endpoint"), cibaText: try r.bool("ciba_text"))
    }
}
