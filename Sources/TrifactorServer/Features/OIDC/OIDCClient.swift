import Core
import Foundation

/// A relying party registered with the OpenID Provider: who it is, where
/// it may be sent back to, how it proves itself at the token endpoint, and
/// what it may ask for. Its secret is never stored, only the secret's SHA-256.
struct OIDCClient: Sendable, Equatable {
    /// How a client proves itself at the token endpoint (RFC 7591 §2,
    /// `token_endpoint_auth_method`).
    enum AuthMethod: String, Sendable, CaseIterable {
        /// A secret in HTTP Basic. A client registered for it may also send
        /// it in the body: relying parties that mix the two are common.
        case clientSecretBasic = "client_secret_basic"
        /// A secret in the form body; Basic is accepted too.
        case clientSecretPost = "client_secret_post"
        /// A JWT signed by a key in the client's registered JWKS (RFC 7523).
        case privateKeyJWT = "private_key_jwt"
        /// A public client (a native or browser app): no secret, PKCE required.
        case none

        var usesSecret: Bool { self == .clientSecretBasic || self == .clientSecretPost }
    }

    /// The grants a client may use.
    enum GrantType: String, Sendable, CaseIterable {
        case authorizationCode = "authorization_code"
        case refreshToken = "refresh_token"
        case clientCredentials = "client_credentials"
        /// The device authorization grant (RFC 8628): a device without a browser shows a code the user enters here.
        case deviceCode = "urn:ietf:params:oauth:grant-type:device_code"
        /// OpenID CIBA Core §4: back-channel authentication, approved on the user's device.
        case ciba = "urn:openid:params:grant-type:ciba"
    }

    /// How a CIBA client learns the outcome (CIBA Core §5): it polls the token endpoint, or is pinged first.
    enum CIBAMode: String, Sendable, CaseIterable {
        case poll, ping
    }

    /// Who registered it: the operator on the host, an admin key, or the client itself (RFC 7591).
    enum Registrar: String, Sendable {
        case host, admin, dynamic
    }

    let id: String
    var name: String
    var secretHash: String?
    var authMethod: AuthMethod
    var redirectURIs: [String]
    var postLogoutRedirectURIs: [String]
    var grantTypes: [GrantType]
    /// The scopes it may ask for (`openid` is always among them for a client with the code grant).
    var scopes: [String]
    /// Operated by the same party as this server: no consent page.
    var firstParty: Bool
    /// Put the standard profile claims in ID tokens too, not only behind UserInfo.
    var profileInIDToken: Bool
    /// `id_token_signed_response_alg`: ES256, or RS256 for relying parties that know only it.
    var idTokenAlgorithm: String
    /// Its public keys (a JWK Set), for `private_key_jwt`.
    var jwks: String?
    var logoURI: String?
    var backchannelLogoutURI: String?
    var registrationTokenHash: String?
    let registeredBy: Registrar
    let createdAt: Int64
    var updatedAt: Int64
    /// Held to the FAPI 2.0 Security Profile: pushed requests only, PKCE S256, DPoP-bound tokens whose refresh
    /// token is not rotated, `private_key_jwt` only.
    var fapi2 = false
    /// `dpop_bound_access_tokens` (RFC 9449 §5.2): every token request brings a DPoP proof.
    var dpopBound = false
    /// `backchannel_token_delivery_mode` of a client with the CIBA grant.
    var cibaMode: CIBAMode? = nil
    /// `backchannel_client_notification_endpoint`: where a ping-mode client is told its request was decided.
    var cibaEndpoint: String? = nil
    /// A user without a device may approve this client's CIBA requests by a link texted to their phone: one factor
    /// (`amr` sms), so off unless the operator says the client takes it (`clients create --ciba-text`).
    var cibaText = false

    var isPublic: Bool { authMethod == .none }

    /// The scopes this provider knows (OIDC Core §5.4 and §11).
    static let knownScopes = ["openid", "profile", "email", "phone", "offline_access"]

    /// Whether `id` is acceptable as a client id an operator chooses: 3 to 64 of `A-Z a-z 0-9 . _ -`.
    static func isValidID(_ id: String) -> Bool {
        (3...64).contains(id.utf8.count)
            && id.utf8.allSatisfy { c in
                (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c == 0x2d
                    || c == 0x2e || c == 0x5f
            }
    }

    /// The first standard scope of `scopes` this client was not registered for: it may ask for those only as
    /// registered (a resource server's own scopes, `mcp` or `reports:read`, are the resource server's to judge).
    func unregisteredScope(in scopes: [String]) -> String? {
        scopes.first { Self.knownScopes.contains($0) && !self.scopes.contains($0) }
    }
}
