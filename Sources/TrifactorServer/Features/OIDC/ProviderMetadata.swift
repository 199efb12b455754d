import Foundation
import JOSE
import Messaging

/// The provider's metadata (OIDC Discovery 1.0 §3, RFC 8414 §2), served at
/// both well-known addresses: exactly what this server implements.
struct ProviderMetadata: Sendable {
    let issuer: String
    /// Clients may register themselves (`registration_endpoint` is listed).
    var registration = false
    /// Every authorization request must be pushed first (RFC 9126 §5).
    var requirePushedRequests = false
    /// Every client is held to FAPI 2.0: private_key_jwt is the only client authentication offered.
    var fapi2 = false
    /// The operator's own authorization details types (RFC 9396 §10), beside `payment_initiation`.
    var detailsTypes: [String] = []

    func endpoint(_ path: String) -> String { issuer + path }

    var json: [UInt8] {
        let authMethods: [String] =
            fapi2 ? ["private_key_jwt"] : ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"]
        func list(_ items: [String]) -> JSONValue { .array(items.map(JSONValue.string)) }
        let clientAlgorithms = (fapi2 ? ClientAuthentication.fapi2Algorithms : ClientAuthentication.algorithms).map(
            \.rawValue
        ).sorted()
        var document: [String: JSONValue] = [
            "issuer": .string(issuer),
            "authorization_endpoint": .string(endpoint("/authorize")),
            "token_endpoint": .string(endpoint("/token")),
            "userinfo_endpoint": .string(endpoint("/userinfo")),
            "jwks_uri": .string(endpoint("/jwks")),
            "revocation_endpoint": .string(endpoint("/revoke")),
            "introspection_endpoint": .string(endpoint("/introspect")),
            "pushed_authorization_request_endpoint": .string(endpoint("/par")),
            "require_pushed_authorization_requests": .bool(requirePushedRequests),
            "end_session_endpoint": .string(endpoint("/logout")),
            "scopes_supported": list(OIDCClient.knownScopes),
            "response_types_supported": list(["code"]),
            "response_modes_supported": list(["query", "form_post"]),
            "grant_types_supported": list(OIDCClient.GrantType.allCases.map(\.rawValue)),
            // RFC 8628 §4.
            "device_authorization_endpoint": .string(endpoint("/device_authorization")),
            // CIBA Core §4.
            "backchannel_authentication_endpoint": .string(endpoint("/bc-authorize")),
            "backchannel_token_delivery_modes_supported": list(["poll", "ping"]),
            "backchannel_user_code_parameter_supported": .bool(false),
            "subject_types_supported": list(["public"]),
            // FAPI 2.0 §5.4.1: ES256 alone under the server-wide switch (never RS256).
            "id_token_signing_alg_values_supported": list(fapi2 ? ["ES256"] : ["ES256", "RS256"]),
            "token_endpoint_auth_methods_supported": list(authMethods),
            // FAPI 2.0 §5.4.1: PS256, ES256 or EdDSA for a FAPI client; RS256 besides for the others.
            "token_endpoint_auth_signing_alg_values_supported": list(clientAlgorithms),
            "revocation_endpoint_auth_methods_supported": list(authMethods),
            "introspection_endpoint_auth_methods_supported": list(authMethods.filter { $0 != "none" }),
            "code_challenge_methods_supported": list(["S256"]),
            "dpop_signing_alg_values_supported": list(clientAlgorithms),
            "acr_values_supported": list(ACR.allCases.map(\.rawValue)),
            "prompt_values_supported": list(AuthorizationRequest.Prompt.allCases.map(\.rawValue)),
            "claims_supported": list([
                "sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "acr", "amr", "azp", "sid", "name",
                "preferred_username", "locale", "email", "email_verified", "phone_number", "phone_number_verified",
            ]),
            "claims_parameter_supported": .bool(false),
            // RFC 9101 §10.5, RFC 9126 §3: signed request objects, at the pushed authorization request endpoint only
            // (sent straight to the authorization endpoint, `request` is answered request_not_supported).
            // OIDC Discovery §3 means the authorization endpoint, which still answers request_not_supported: request
            // objects are taken only pushed (request_object_signing_alg_values_supported and the PAR endpoint say so).
            "request_parameter_supported": .bool(false),
            "request_object_signing_alg_values_supported": list(clientAlgorithms),
            "request_uri_parameter_supported": .bool(false),
            "authorization_response_iss_parameter_supported": .bool(true),
            // The languages of the hosted pages, chosen by `ui_locales` (OIDC Discovery 1.0 §3).
            "ui_locales_supported": list(HostedText.catalog.languages.keys.sorted()),
            // RFC 9396 §10.
            "authorization_details_types_supported": list(
                ([AuthorizationDetails.paymentType] + detailsTypes).sorted()),
        ]
        if registration { document["registration_endpoint"] = .string(endpoint("/register")) }
        return JSONValue.serialize(document)
    }
}
