import API
import CommandLineKit
import Core
import Crypto
import Foundation
import Logging
import Store

/// `trifactord clients create|list|show|update|rotate-secret|delete`: the
/// OpenID Provider's relying parties, registered by the operator on the host
/// and audited as `host:<login>`. Lists of URIs, scopes and grants are one
/// option each, their items separated by spaces (a URI holds no space).
enum ClientsCommand {
    static let usage = """
        Usage: trifactord clients create --name NAME --redirect-uris "URI …" [OPTIONS] [--json]
               trifactord clients update ID [OPTIONS] [--json]
               trifactord clients list [--json] | show ID [--json] | rotate-secret ID [--json] | delete ID

        Options of create and update (update keeps what is not given):
          --id ID                      the client_id (3 to 64 of A-Z a-z 0-9 . _ -; made for you when left out)
          --name NAME                  shown on the sign-in and consent pages
          --redirect-uris "URI …"      where codes are sent back, matched exactly (https; http only to loopback)
          --post-logout-uris "URI …"   where RP-initiated logout may return
          --auth-method METHOD         client_secret_basic (the default), client_secret_post, private_key_jwt, none
          --jwks-file PATH             the client's public keys (a JWK Set), for private_key_jwt
          --grants "GRANT …"           authorization_code refresh_token (the default) client_credentials
                                       urn:ietf:params:oauth:grant-type:device_code (RFC 8628, devices without a browser)
                                       urn:openid:params:grant-type:ciba
          --scopes "SCOPE …"           what it may ask for (default: openid profile email phone offline_access)
          --id-token-alg ALG           ES256 (the default) or RS256, for relying parties that know only RS256
          --logo-uri URL               an https logo for the sign-in page
          --backchannel-logout-uri URI where sign-outs are announced
          --ciba poll|ping             how a client with the CIBA grant learns the outcome (default poll)
          --ciba-notification-endpoint URL  where a ping-mode client is told (CIBA's client notification endpoint)
          --ciba-text                  a user without a device may approve by a link texted to their phone (one factor)
          --no-ciba-text               (update) no longer
          --first-party                no consent page (the operator runs this client)
          --profile-in-id-token        put profile claims in ID tokens too, not only behind UserInfo
          --fapi2                      hold it to FAPI 2.0: pushed requests, PKCE, DPoP-bound tokens, private_key_jwt
          --dpop-bound                 every token request brings a DPoP proof (dpop_bound_access_tokens, RFC 9449)
        """

    static func run(_ arguments: [String], environment: [String: String]) throws {
        let verbs = ["create", "update", "list", "show", "rotate-secret", "delete"]
        guard let sub = arguments.first, verbs.contains(sub) else {
            throw ConfigurationParser.Failure(description: usage)
        }
        let o = try Arguments(
            Array(arguments.dropFirst()),
            valued: [
                "id", "name", "redirect-uris", "post-logout-uris", "auth-method", "jwks-file", "grants", "scopes",
                "logo-uri", "backchannel-logout-uri", "id-token-alg", "ciba", "ciba-notification-endpoint",
            ],
            flags: ["json", "first-party", "profile-in-id-token", "fapi2", "dpop-bound", "ciba-text", "no-ciba-text"],
            layout: .sharedWithSettings
        )
        try o.atMost(["create", "list"].contains(sub) ? 0 : 1, see: "trifactord clients --help")
        let config = try ConfigurationParser.parse(arguments: o.passedOn, environment: environment)
        let login = environment["SUDO_USER"] ?? environment["USER"] ?? "operator"
        let actor = "host:\(login)"
        let audit = AuditContext(ip: "local", userAgent: "trifactord")
        try ListCommands.withDatabase(config) { database in
            let service = ClientService(
                transactions: Transactions(database: database, logger: Logger { _ in }), clock: .system,
                random: SecureRandom.source, fapi2Everywhere: config.fapi2)
            do {
                switch sub {
                case "create":
                    let registered = try service.create(
                        try draft(o, base: nil), by: .host, client: audit, actor: actor)
                    try show(registered.client, secret: registered.secret, json: o.has("json"))
                case "update":
                    let id = try o.word(0, "the client to update: clients update ID")
                    guard let current = try service.find(id) else { throw ClientFailure.notFound }
                    try show(
                        try service.update(id, with: try draft(o, base: current), client: audit, actor: actor),
                        secret: nil, json: o.has("json"))
                case "list":
                    let all = try service.list()
                    if o.has("json") {
                        try CommandOutput.printJSON(all.map(ClientMetadataJSON.object))
                    } else if all.isEmpty {
                        print(
                            "There are no clients yet: trifactord clients create --name NAME --redirect-uris URI makes one."
                        )
                    } else {
                        for c in all { print("\(c.id)  \(c.authMethod.rawValue)  \(c.name)") }
                    }
                case "show":
                    guard let client = try service.find(try o.word(0, "the client to show: clients show ID")) else {
                        throw ClientFailure.notFound
                    }
                    try show(client, secret: nil, json: o.has("json"))
                case "rotate-secret":
                    let id = try o.word(0, "the client: clients rotate-secret ID")
                    let secret = try service.rotateSecret(id, client: audit, actor: actor)
                    if o.has("json") {
                        try CommandOutput.printJSON(["client_id": id, "client_secret": secret])
                    } else {
                        print(
                            "New secret of \(id) (the old one no longer works):\n\(secret)\nIt is shown only now: store it safely."
                        )
                    }
                default:
                    let id = try o.word(0, "the client to delete: clients delete ID")
                    try service.delete(id, client: audit, actor: actor)
                    print("Deleted client \(id), with its codes, tokens and consents.")
                }
            } catch ClientFailure.notFound {
                throw ConfigurationParser.Failure(description: "There is no client \(o.words.first ?? "").")
            } catch ClientFailure.idTaken {
                throw ConfigurationParser.Failure(description: "There is already a client \(o.value("id") ?? "").")
            } catch ClientFailure.noSecret {
                throw ConfigurationParser.Failure(
                    description: "That client has no secret: it authenticates another way.")
            } catch ClientFailure.needsSecret {
                throw ConfigurationParser.Failure(
                    description:
                        "A client without a secret cannot move to a secret method: delete it and create it again with that --auth-method."
                )
            } catch let failure as CommonFailure {
                if case .invalidFields(let fields) = failure {
                    throw ConfigurationParser.Failure(
                        description: CommandOutput.sentence(fields))
                }
                throw ConfigurationParser.Failure(description: "The database is not available now: try again.")
            }
        }
    }

    /// The options as a draft over `base` (update) or over nothing (create).
    private static func draft(_ o: Arguments, base: OIDCClient?) throws -> ClientService.Draft {
        func words(_ name: String) -> [String]? { o.value(name).map { $0.split(separator: " ").map(String.init) } }
        var d = ClientService.Draft()
        d.id = o.value("id")
        d.name = o.value("name") ?? base?.name
        d.authMethod = o.value("auth-method") ?? base?.authMethod.rawValue
        d.redirectURIs = words("redirect-uris") ?? base?.redirectURIs ?? []
        d.postLogoutRedirectURIs = words("post-logout-uris") ?? base?.postLogoutRedirectURIs ?? []
        d.grantTypes = words("grants") ?? base?.grantTypes.map(\.rawValue)
        d.scopes = words("scopes") ?? base?.scopes
        d.firstParty = o.has("first-party") || base?.firstParty == true
        d.profileInIDToken = o.has("profile-in-id-token") || base?.profileInIDToken == true
        d.fapi2 = o.has("fapi2") || base?.fapi2 == true
        d.dpopBound = o.has("dpop-bound") || base?.dpopBound == true
        d.idTokenAlgorithm = o.value("id-token-alg") ?? base?.idTokenAlgorithm
        d.logoURI = o.value("logo-uri") ?? base?.logoURI
        d.backchannelLogoutURI = o.value("backchannel-logout-uri") ?? base?.backchannelLogoutURI
        d.cibaMode = o.value("ciba") ?? base?.cibaMode?.rawValue
        d.cibaEndpoint = o.value("ciba-notification-endpoint") ?? base?.cibaEndpoint
        d.cibaText = o.has("no-ciba-text") ? false : o.has("ciba-text") || base?.cibaText == true
        d.jwks = base?.jwks
        if let path = o.value("jwks-file") {
            guard let data = FileManager.default.contents(atPath: path), data.count <= 64 * 1024 else {
                throw ConfigurationParser.Failure(description: "Cannot read a JWK Set of at most 64 KiB from \(path).")
            }
            d.jwks = String(decoding: data, as: UTF8.self)
        }
        return d
    }

    private static func show(_ c: OIDCClient, secret: String?, json: Bool) throws {
        if json {
            var object = ClientMetadataJSON.object(c)
            if let secret { object["client_secret"] = secret }
            try CommandOutput.printJSON(object)
            return
        }
        print("Client \(c.id): \(c.name)")
        print("  authentication  \(c.authMethod.rawValue)")
        print("  redirect URIs   \(c.redirectURIs.joined(separator: " "))")
        if !c.postLogoutRedirectURIs.isEmpty {
            print("  after logout    \(c.postLogoutRedirectURIs.joined(separator: " "))")
        }
        print("  grants          \(c.grantTypes.map(\.rawValue).joined(separator: " "))")
        print("  scopes          \(c.scopes.joined(separator: " "))")
        if c.firstParty { print("  first party: no consent page") }
        if c.fapi2 { print("  FAPI 2.0: pushed requests, PKCE, DPoP-bound tokens, private_key_jwt") }
        if c.dpopBound { print("  DPoP: every token request brings a proof") }
        if let mode = c.cibaMode {
            print(
                "  CIBA: \(mode.rawValue)\(c.cibaEndpoint.map { " to \($0)" } ?? "")"
                    + (c.cibaText ? ", or a link texted to a user without a device" : ""))
        }
        if let secret { print("Its secret (shown only now: store it safely):\n\(secret)") }
    }
}
