import Foundation
import JOSE

/// An error answered to the client at its redirect URI (RFC 6749 §4.1.2.1,
/// OIDC Core §3.1.2.6), or on an error page when the redirect URI is not
/// known to be the client's.
struct AuthorizationError: Error, Equatable, Sendable {
    let code: String
    let description: String

    static func invalidRequest(_ description: String) -> Self {
        Self(code: "invalid_request", description: description)
    }
    static func invalidScope(_ description: String) -> Self { Self(code: "invalid_scope", description: description) }
    static let loginRequired = Self(code: "login_required", description: "The user is not signed in.")
    static let consentRequired = Self(code: "consent_required", description: "The user has not agreed yet.")
    static let interactionRequired = Self(
        code: "interaction_required", description: "The user must prove a stronger factor.")
    static let accessDenied = Self(code: "access_denied", description: "The user declined.")
}

extension AuthorizationRequest {
    /// Parameters longer than this are refused (a query string rarely needs 8 KiB in all).
    static let maxParameterLength = 2048

    /// Checks the parameters of a request whose client and redirect URI are already verified.
    /// - Throws: `AuthorizationError`, to be sent back to the client.
    static func parse(
        _ p: [String: String], client: OIDCClient, redirectURI: String, schemas: [String: DetailsSchema] = [:]
    ) throws(AuthorizationError) -> AuthorizationRequest {
        for (name, value) in p where value.utf8.count > maxParameterLength && name != "authorization_details" {
            throw .invalidRequest("\(name.prefix(40)) is longer than \(maxParameterLength) bytes.")
        }
        // OIDC Core §6: request objects are optional; this provider answers as §6.1 and §6.2 prescribe.
        if p["request"] != nil {
            throw AuthorizationError(code: "request_not_supported", description: "Request objects are not supported.")
        }
        if p["request_uri"] != nil {
            throw AuthorizationError(code: "request_uri_not_supported", description: "request_uri is not supported.")
        }
        if p["registration"] != nil {
            throw AuthorizationError(code: "registration_not_supported", description: "registration is not supported.")
        }
        guard let responseType = p["response_type"] else { throw .invalidRequest("response_type is required.") }
        guard responseType == "code" else {
            throw AuthorizationError(
                code: "unsupported_response_type", description: "Only response_type=code is supported.")
        }
        guard client.grantTypes.contains(.authorizationCode) else {
            throw AuthorizationError(
                code: "unauthorized_client", description: "This client is not registered for the code grant.")
        }
        let mode: ResponseMode
        switch p["response_mode"] {
        case nil, "query": mode = .query
        case "form_post": mode = .formPost
        default: throw .invalidRequest("response_mode must be query or form_post.")
        }
        guard let scopes = Scope.parse(p["scope"] ?? "openid") else { throw .invalidScope("scope is malformed.") }
        // The standard scopes are the client's to ask for only as registered; a resource server's own scopes (`mcp`,
        // `reports:read`) mean nothing here: the consent page names them and the resource server decides.
        if let refused = client.unregisteredScope(in: scopes) {
            throw .invalidScope("This client may not ask for the scope \(refused.prefix(64)).")
        }
        // RFC 7636 §4.3 and RFC 9700 §2.1.1: S256 only, and required of public clients.
        let challenge = p["code_challenge"]
        if let method = p["code_challenge_method"], method != "S256" {
            throw .invalidRequest("code_challenge_method must be S256.")
        }
        if let challenge {
            guard p["code_challenge_method"] != nil else {
                throw .invalidRequest("code_challenge_method is required (S256): plain is not accepted.")
            }
            guard challenge.utf8.count == 43, Self.isUnreserved(challenge) else {
                throw .invalidRequest("code_challenge must be the 43-character base64url SHA-256 of the verifier.")
            }
        } else if client.isPublic {
            throw .invalidRequest("code_challenge is required: this client must use PKCE with S256.")
        } else if p["code_challenge_method"] != nil {
            throw .invalidRequest("code_challenge is missing.")
        }
        var prompts: [Prompt] = []
        for word in (p["prompt"] ?? "").split(separator: " ") {
            guard let prompt = Prompt(rawValue: String(word)) else {
                throw .invalidRequest("prompt \(word.prefix(40)) is not one of none, login, consent, select_account.")
            }
            if !prompts.contains(prompt) { prompts.append(prompt) }
        }
        // OIDC Core §3.1.2.1: none with any other value is an error.
        if prompts.contains(.none) && prompts.count > 1 {
            throw .invalidRequest("prompt=none cannot be combined with other values.")
        }
        var maxAge: Int?
        if let text = p["max_age"] {
            // At most ten years: a longer one means nothing, and no figure may overflow the arithmetic after.
            guard text.count <= 10, let value = Int(text), (0...315_360_000).contains(value) else {
                throw .invalidRequest("max_age must be a whole number of seconds, at most ten years.")
            }
            maxAge = value
        }
        if let state = p["state"], state.isEmpty { throw .invalidRequest("state must not be empty when sent.") }
        if let nonce = p["nonce"], nonce.isEmpty || nonce.utf8.count > 512 {
            throw .invalidRequest("nonce must be 1 to 512 bytes.")
        }
        if let hint = p["login_hint"], hint.utf8.count > 254 { throw .invalidRequest("login_hint is too long.") }
        var resource: String?
        if let text = p["resource"] {
            // RFC 8707 §2: an absolute URI without a fragment.
            guard let url = URLComponents(string: text), url.scheme != nil, url.fragment == nil, !text.contains("#")
            else {
                throw AuthorizationError(
                    code: "invalid_target", description: "resource must be an absolute URI without a fragment.")
            }
            resource = text
        }
        if let jkt = p["dpop_jkt"], jkt.utf8.count != 43 || StrictBase64URL.decode(jkt) == nil {
            throw .invalidRequest("dpop_jkt must be the base64url SHA-256 thumbprint of the DPoP key (RFC 9449 §10).")
        }
        var details: AuthorizationDetails?
        if let text = p["authorization_details"] {
            // Spending needs a client that authenticates: a public client's approval could never move money, and the
            // user would approve (and be texted) for nothing.
            guard !client.isPublic else {
                throw .invalidDetails("authorization_details needs a client that authenticates itself.")
            }
            // Up to 8 KiB: five objects of a payment's size with room to spare (a pushed request holds 16 KiB).
            guard text.utf8.count <= 8192 else { throw .invalidDetails("authorization_details is longer than 8 KiB.") }
            details = try AuthorizationDetails.parse(text, schemas: schemas)
        }
        let acrValues = (p["acr_values"] ?? "").split(separator: " ").map(String.init)
        var parsed = AuthorizationRequest(
            clientID: client.id, redirectURI: redirectURI, scopes: scopes, state: p["state"], nonce: p["nonce"],
            codeChallenge: challenge, responseMode: mode, prompts: prompts, maxAge: maxAge, loginHint: p["login_hint"],
            hintedSubject: nil, requestedLevel: ACR.requested(acrValues), acrRequested: !acrValues.isEmpty,
            uiLocales: (p["ui_locales"] ?? "").split(separator: " ").prefix(10).map(String.init),
            resource: resource, dpopJKT: p["dpop_jkt"])
        parsed.authorizationDetails = details
        return parsed
    }

    /// RFC 7636 §4.1: `[A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~"`.
    static func isUnreserved(_ text: String) -> Bool {
        text.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c == 0x2d || c == 0x2e
                || c == 0x5f || c == 0x7e
        }
    }
}
