import Foundation

/// An authorization request (RFC 6749 §4.1.1, OIDC Core §3.1.2.1) once its
/// client and redirect URI are known and every parameter is checked: what
/// the persisted flow keeps between the sign-in pages.
struct AuthorizationRequest: Sendable, Codable, Equatable {
    /// How the code goes back: in the query (RFC 6749) or as an auto-posted form (OAuth 2.0 Form Post).
    enum ResponseMode: String, Sendable, Codable { case query, formPost = "form_post" }

    /// `prompt` values (OIDC Core §3.1.2.1).
    enum Prompt: String, Sendable, Codable, CaseIterable {
        case none, login, consent
        case selectAccount = "select_account"
    }

    var clientID: String
    var redirectURI: String
    var scopes: [String]
    var state: String?
    var nonce: String?
    /// The PKCE S256 challenge (RFC 7636); nil for a confidential client that sent none.
    var codeChallenge: String?
    var responseMode: ResponseMode
    var prompts: [Prompt]
    /// Seconds since the user last proved who they are beyond which they must do it again.
    var maxAge: Int?
    var loginHint: String?
    /// The subject of a valid `id_token_hint`: only that user may be signed in for it.
    var hintedSubject: String?
    /// The assurance level asked for, the highest of the known `acr_values` (unknown ones never lower it).
    var requestedLevel: ACR?
    /// Whether `acr_values` was sent (a level was asked for, even if none was known: then the highest).
    var acrRequested: Bool
    var uiLocales: [String]
    /// The resource the access token is for (RFC 8707), its audience.
    var resource: String?
    /// RFC 9449 §10: the thumbprint of the DPoP key the code is bound to (`dpop_jkt`).
    var dpopJKT: String? = nil
    /// RFC 9396: what the client asks to be authorized for (a payment), approved with a second factor bound to it.
    var authorizationDetails: AuthorizationDetails? = nil

    func has(_ prompt: Prompt) -> Bool { prompts.contains(prompt) }
}

/// The assurance levels a relying party may ask for with `acr_values` and
/// finds in `acr`: one per level of proof, highest last.
enum ACR: String, Sendable, Codable, CaseIterable, Comparable {
    /// A password alone.
    case password = "urn:trifactor:acr:password"
    /// A password and a second factor (or a passkey alone).
    case mfa = "urn:trifactor:acr:mfa"
    /// A hardware-bound key released by the user's check: a passkey with user
    /// verification, or a device key behind biometry or the device passcode.
    case hardwareKey = "urn:trifactor:acr:hwk"

    private var rank: Int {
        switch self {
        case .password: 1
        case .mfa: 2
        case .hardwareKey: 3
        }
    }

    static func < (a: ACR, b: ACR) -> Bool { a.rank < b.rank }

    /// The level `acr_values` asks for: the highest known value listed, or the
    /// highest there is when none is known, so an unknown value never lowers the bar.
    static func requested(_ values: [String]) -> ACR? {
        guard !values.isEmpty else { return nil }
        return values.compactMap(ACR.init(rawValue:)).max() ?? .hardwareKey
    }
}
