import Core
import Crypto
import Foundation
import Store

/// Registers and manages the OpenID Provider's clients: on the host
/// (`trifactord clients`), through the admin API, or by the clients
/// themselves (RFC 7591). Every change is checked whole before anything is
/// written, and audited.
struct ClientService: Sendable {
    let transactions: Transactions
    let clock: Clock
    let random: RandomSource
    /// Every client is held to FAPI 2.0 (`TRIFACTOR_OIDC_FAPI2`): each is registered as one.
    var fapi2Everywhere = false

    /// A client's metadata as given, before it is checked (RFC 7591 §2 names).
    struct Draft: Sendable {
        var id: String?
        var name: String?
        var authMethod: String?
        var redirectURIs: [String] = []
        var postLogoutRedirectURIs: [String] = []
        var grantTypes: [String]?
        var scopes: [String]?
        var firstParty = false
        var profileInIDToken = false
        /// Held to the FAPI 2.0 Security Profile.
        var fapi2 = false
        /// `dpop_bound_access_tokens` (RFC 9449 §5.2).
        var dpopBound = false
        var idTokenAlgorithm: String?
        var jwks: String?
        var logoURI: String?
        var backchannelLogoutURI: String?
        /// `backchannel_token_delivery_mode` (CIBA): poll or ping.
        var cibaMode: String?
        var cibaEndpoint: String?
        /// Trifactor's extension: a user without a device may approve by a link texted to their phone (one factor).
        var cibaText = false
    }

    /// A client as registered, with its secret and registration token shown once.
    struct Registered: Sendable {
        let client: OIDCClient
        let secret: String?
        let registrationToken: String?
    }

    /// Checks `draft` and registers it.
    /// - Throws: `CommonFailure.invalidFields` naming each field that is wrong (RFC 7591 names), or
    ///   `ClientFailure.idTaken`.
    func create(_ draft: Draft, by registrar: OIDCClient.Registrar, client audit: AuditContext, actor: String) throws
        -> Registered
    {
        let now = clock.now().millis
        var draft = draft
        draft.fapi2 = draft.fapi2 || fapi2Everywhere
        var client = try Self.validate(draft, id: draft.id ?? Self.newID(random), registrar: registrar, now: now)
        let secret = client.authMethod.usesSecret ? Self.newSecret(random) : nil
        client.secretHash = secret.map(SHA256.hex)
        let registrationToken = registrar == .dynamic ? Self.newSecret(random) : nil
        client.registrationTokenHash = registrationToken.map(SHA256.hex)
        try transactions.write { db in
            guard try ClientRepository.find(client.id, on: db) == nil else { throw ClientFailure.idTaken }
            try ClientRepository.insert(client, on: db)
            try AuditLog.append(
                audit.event(.oidcClientCreated, .success, detail: "client=\(client.id) by=\(actor)"), at: now, on: db)
        }
        return Registered(client: client, secret: secret, registrationToken: registrationToken)
    }

    /// Replaces a client's metadata with `draft` (its id, secret and registrar stay).
    /// - Throws: `ClientFailure.notFound`, `CommonFailure.invalidFields`.
    func update(_ id: String, with draft: Draft, client audit: AuditContext, actor: String) throws -> OIDCClient {
        let now = clock.now().millis
        return try transactions.write { db in
            guard let current = try ClientRepository.managed(id, on: db) else { throw ClientFailure.notFound }
            var held = draft
            held.fapi2 = draft.fapi2 || fapi2Everywhere
            var next = try Self.validate(held, id: id, registrar: current.registeredBy, now: current.createdAt)
            next.updatedAt = now
            // A client that moves to or from a secret gets one, or loses it.
            next.secretHash = next.authMethod.usesSecret ? current.secretHash : nil
            next.registrationTokenHash = current.registrationTokenHash
            if next.authMethod.usesSecret && current.secretHash == nil { throw ClientFailure.needsSecret }
            try ClientRepository.update(next, on: db)
            try AuditLog.append(
                audit.event(.oidcClientUpdated, .success, detail: "client=\(id) by=\(actor)"), at: now, on: db)
            return next
        }
    }

    /// A new secret for a confidential client; the old one stops working at once.
    /// - Throws: `ClientFailure.notFound`, `.noSecret` for a public or `private_key_jwt` client.
    func rotateSecret(_ id: String, client audit: AuditContext, actor: String) throws -> String {
        let now = clock.now().millis
        let secret = Self.newSecret(random)
        try transactions.write { db in
            guard var client = try ClientRepository.managed(id, on: db) else { throw ClientFailure.notFound }
            guard client.authMethod.usesSecret else { throw ClientFailure.noSecret }
            client.secretHash = SHA256.hex(secret)
            client.updatedAt = now
            try ClientRepository.update(client, on: db)
            try AuditLog.append(
                audit.event(.oidcClientUpdated, .success, detail: "client=\(id) secret rotated by=\(actor)"), at: now,
                on: db)
        }
        return secret
    }

    /// Removes a client with everything issued to it.
    /// - Throws: `ClientFailure.notFound`.
    func delete(_ id: String, client audit: AuditContext, actor: String) throws {
        let now = clock.now().millis
        try transactions.write { db in
            guard try ClientRepository.delete(id, on: db) else { throw ClientFailure.notFound }
            try AuditLog.append(
                audit.event(.oidcClientDeleted, .success, detail: "client=\(id) by=\(actor)"), at: now, on: db)
        }
    }

    func find(_ id: String) throws -> OIDCClient? { try transactions.read { try ClientRepository.managed(id, on: $0) } }

    func list() throws -> [OIDCClient] { try transactions.read { try ClientRepository.all(on: $0) } }

    /// Client ids the server makes: 128 random bits, base64url.
    static func newID(_ random: RandomSource) -> String { Base64URL.encode(random.bytes(16)) }

    /// Secrets and registration tokens: 256 random bits, base64url (43 characters).
    static func newSecret(_ random: RandomSource) -> String { Base64URL.encode(random.bytes(32)) }
}

/// Why a client could not be changed.
enum ClientFailure: Error, Equatable {
    case notFound
    case idTaken
    /// `rotate-secret` on a client that has no secret.
    case noSecret
    /// A client moved to a secret method must get one with `rotate-secret`.
    case needsSecret
}
