import Core
import Foundation

extension ClientService {
    /// `draft` as a client, or every problem with it at once (RFC 7591 field names).
    static func validate(_ draft: Draft, id: String, registrar: OIDCClient.Registrar, now: Int64) throws
        -> OIDCClient
    {
        var problems: [FieldProblem] = []
        func refuse(_ field: String, _ reason: String) { problems.append(FieldProblem(name: field, reason: reason)) }

        if !OIDCClient.isValidID(id) { refuse("client_id", "must be 3 to 64 letters, digits, '.', '_' or '-'") }
        let name = (draft.name ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        if name.isEmpty && registrar != .dynamic {
            refuse("client_name", "is required: the sign-in page shows it")
        } else if name.count > 100 || name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        {
            refuse("client_name", "must be at most 100 characters without control characters")
        }
        if draft.firstParty && registrar == .dynamic {
            refuse("first_party", "cannot be set for a self-registered client: it would skip the consent page")
        }
        let method = OIDCClient.AuthMethod(rawValue: draft.authMethod ?? "client_secret_basic")
        if method == nil {
            refuse(
                "token_endpoint_auth_method",
                "must be one of \(OIDCClient.AuthMethod.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var grants: [OIDCClient.GrantType] = []
        for text in draft.grantTypes ?? ["authorization_code", "refresh_token"] {
            guard let grant = OIDCClient.GrantType(rawValue: text) else {
                refuse("grant_types", "lists \"\(text.prefix(40))\", which this server does not offer")
                continue
            }
            if !grants.contains(grant) { grants.append(grant) }
        }
        if grants.isEmpty && problems.allSatisfy({ $0.name != "grant_types" }) {
            refuse("grant_types", "must list at least one grant")
        }
        if grants.contains(.clientCredentials) && method == OIDCClient.AuthMethod.none {
            refuse("grant_types", "client_credentials needs a client that authenticates itself")
        }
        if grants == [.refreshToken] {
            refuse(
                "grant_types", "refresh_token needs authorization_code or \(OIDCClient.GrantType.deviceCode.rawValue)")
        }
        let isPublic = method == OIDCClient.AuthMethod.none
        if grants.contains(.authorizationCode) && draft.redirectURIs.isEmpty {
            refuse("redirect_uris", "must list at least one URI for the authorization_code grant")
        }
        if draft.redirectURIs.count > 20 { refuse("redirect_uris", "must list at most 20 URIs") }
        for uri in draft.redirectURIs {
            if let reason = RedirectURI.refusal(uri, isPublic: isPublic) {
                refuse("redirect_uris", "\(uri.prefix(80)) \(reason)")
            }
        }
        if draft.postLogoutRedirectURIs.count > 20 { refuse("post_logout_redirect_uris", "must list at most 20 URIs") }
        for uri in draft.postLogoutRedirectURIs {
            if let reason = RedirectURI.refusal(uri, isPublic: isPublic) {
                refuse("post_logout_redirect_uris", "\(uri.prefix(80)) \(reason)")
            }
        }
        var scopes: [String] = []
        for scope in draft.scopes ?? OIDCClient.knownScopes {
            guard Scope.isToken(scope) else {
                refuse("scope", "\"\(scope.prefix(40))\" is not a scope token (RFC 6749 §3.3)")
                continue
            }
            if !scopes.contains(scope) { scopes.append(scope) }
        }
        if scopes.count > 32 { refuse("scope", "must list at most 32 scopes") }
        if (grants.contains(.authorizationCode) || grants.contains(.deviceCode)) && !scopes.contains("openid") {
            scopes.insert("openid", at: 0)
        }
        if method == .privateKeyJWT {
            if let jwks = draft.jwks {
                if let reason = JWKSCheck.refusal(jwks) { refuse("jwks", reason) }
            } else {
                refuse("jwks", "is required for private_key_jwt: the keys that sign the client's assertions")
            }
        }
        if let logo = draft.logoURI, RedirectURI.refusal(logo, isPublic: false) != nil || !logo.hasPrefix("https://") {
            refuse("logo_uri", "must be an https URL")
        }
        if let uri = draft.backchannelLogoutURI {
            // The server itself posts to this address: a self-registered client could aim it at an internal
            // service (server-side request forgery), so only the operator's clients may have one.
            if registrar == .dynamic {
                refuse("backchannel_logout_uri", "is for clients the operator registers")
            } else if let reason = RedirectURI.refusal(uri, isPublic: false) {
                refuse("backchannel_logout_uri", reason)
            }
        }
        // RFC 8628 §5.4: a device code's link is a phishing lure in a stranger's hands (it opens the real server's
        // page, naming the stranger's app): only the operator's clients may ask for one.
        if grants.contains(.deviceCode) && registrar == .dynamic {
            refuse("grant_types", "the device grant is for clients the operator registers")
        }
        // CIBA Core §4: a confidential client, told the outcome by polling or by a ping to its endpoint.
        var cibaMode: OIDCClient.CIBAMode?
        if grants.contains(.ciba) {
            if method == OIDCClient.AuthMethod.none { refuse("grant_types", "CIBA needs a client that authenticates") }
            if registrar == .dynamic { refuse("grant_types", "CIBA is for clients the operator registers") }
            cibaMode = OIDCClient.CIBAMode(rawValue: draft.cibaMode ?? "poll")
            if cibaMode == nil { refuse("backchannel_token_delivery_mode", "must be poll or ping") }
            if cibaMode == .ping {
                // The server posts to it (as to a logout URI): https, or http to loopback.
                if let uri = draft.cibaEndpoint {
                    if let reason = RedirectURI.refusal(uri, isPublic: false) {
                        refuse("backchannel_client_notification_endpoint", reason)
                    }
                } else {
                    refuse("backchannel_client_notification_endpoint", "is required for the ping mode")
                }
            }
        } else if draft.cibaMode != nil || draft.cibaEndpoint != nil || draft.cibaText {
            refuse("backchannel_token_delivery_mode", "needs the grant \(OIDCClient.GrantType.ciba.rawValue)")
        }
        // FAPI 2.0 §5.3.2.1: confidential clients only, authenticated by private_key_jwt (mTLS is not offered).
        if draft.fapi2 && method != nil && method != .privateKeyJWT {
            refuse("token_endpoint_auth_method", "must be private_key_jwt for a FAPI 2.0 client")
        }
        // FAPI 2.0 §5.4.1: PS256, ES256 or EdDSA, never RS256.
        if draft.fapi2 && (draft.idTokenAlgorithm ?? "ES256") != "ES256" {
            refuse("id_token_signed_response_alg", "must be ES256 for a FAPI 2.0 client")
        }
        let algorithm = draft.idTokenAlgorithm ?? "ES256"
        if !["ES256", "RS256"].contains(algorithm) {
            refuse("id_token_signed_response_alg", "must be ES256 or RS256")
        }
        guard problems.isEmpty, let method else { throw CommonFailure.invalidFields(problems) }
        var client = OIDCClient(
            id: id, name: name.isEmpty ? Self.defaultName(draft.redirectURIs) : name, secretHash: nil,
            authMethod: method, redirectURIs: draft.redirectURIs, postLogoutRedirectURIs: draft.postLogoutRedirectURIs,
            grantTypes: grants, scopes: scopes, firstParty: registrar != .dynamic && draft.firstParty,
            profileInIDToken: draft.profileInIDToken, idTokenAlgorithm: algorithm,
            jwks: method == .privateKeyJWT ? draft.jwks : nil,
            logoURI: draft.logoURI, backchannelLogoutURI: draft.backchannelLogoutURI, registrationTokenHash: nil,
            registeredBy: registrar, createdAt: now, updatedAt: now)
        client.fapi2 = draft.fapi2
        client.dpopBound = draft.dpopBound
        client.cibaMode = cibaMode
        client.cibaEndpoint = cibaMode == .ping ? draft.cibaEndpoint : nil
        client.cibaText = cibaMode != nil && draft.cibaText
        return client
    }

    /// A self-registered client without a name is shown by the host it returns to.
    private static func defaultName(_ uris: [String]) -> String {
        uris.first.flatMap { URLComponents(string: $0)?.host }.map { "An app at \($0)" } ?? "An unnamed app"
    }
}

/// Scope strings (RFC 6749 §3.3).
enum Scope {
    /// Whether `text` is one scope token: 1 to 64 of `%x21 / %x23-5B / %x5D-7E`.
    static func isToken(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count)
            && text.utf8.allSatisfy { c in c == 0x21 || (c >= 0x23 && c <= 0x5b) || (c >= 0x5d && c <= 0x7e) }
    }

    /// A space-separated scope parameter as a list without repeats, in order; nil when one token is malformed.
    static func parse(_ text: String) -> [String]? {
        var out: [String] = []
        for part in text.split(separator: " ", omittingEmptySubsequences: true) {
            let token = String(part)
            guard isToken(token) else { return nil }
            if !out.contains(token) { out.append(token) }
        }
        return out
    }
}
