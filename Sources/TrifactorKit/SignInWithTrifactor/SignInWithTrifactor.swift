public import Foundation

/// An app's side of Sign in with Trifactor (OpenID Connect's authorization code flow with PKCE, for a public
/// client): it reads the provider's metadata, builds the authorization request, checks the callback, exchanges the
/// code, verifies the ID token and refreshes the tokens. One value per provider and client; it keeps the provider's
/// metadata and keys once read.
///
/// ```swift
/// let signIn = SignInWithTrifactor(
///     issuer: URL(string: "https://auth.example.com")!, clientID: "bank-ios",
///     redirectURI: URL(string: "com.example.bank:/oauth")!, scopes: ["openid", "email"],
///     crypto: CryptoKitTokenCrypto())
/// let tokens = try await signIn.signIn(using: WebAuthenticationSessionBrowser(anchor: window), level: .multiFactor)
/// print(tokens.idToken.subject, tokens.idToken.level, tokens.idToken.methods)
/// ```
///
/// - Important: The issuer must be written exactly as the provider names itself (no trailing slash for
///   trifactord): the metadata naming another issuer is refused (OpenID Connect Discovery §4.3).
public final class SignInWithTrifactor: Sendable {
    /// The provider's metadata as this client uses it.
    public struct Metadata: Sendable, Equatable {
        /// The issuer, equal to the configured one.
        public let issuer: String
        /// Where the browser goes (`authorization_endpoint`).
        public let authorizationEndpoint: URL
        /// Where codes and refresh tokens are exchanged (`token_endpoint`).
        public let tokenEndpoint: URL
        /// The provider's public keys (`jwks_uri`).
        public let jwksURI: URL
        /// RP-initiated logout (`end_session_endpoint`), if offered.
        public let endSessionEndpoint: URL?
        /// Whether the provider puts `iss` in its authorization responses (RFC 9207); then a callback without it is
        /// refused.
        public let issuerInAuthorizationResponse: Bool
        /// Where a device without a browser asks for its codes (`device_authorization_endpoint`, RFC 8628), if
        /// offered.
        public var deviceAuthorizationEndpoint: URL? = nil
        /// Where a confidential client pushes its authorization requests (`pushed_authorization_request_endpoint`,
        /// RFC 9126), if offered.
        public var pushedAuthorizationRequestEndpoint: URL? = nil
        /// Where a confidential client starts a decoupled sign-in (`backchannel_authentication_endpoint`, OpenID
        /// CIBA Core 1.0), if offered.
        public var backchannelAuthenticationEndpoint: URL? = nil
    }

    /// What `prompt` asks of the provider's sign-in page.
    public enum Prompt: String, Sendable, Codable {
        /// Show no page: answer `login_required` or the like instead.
        case none
        /// Ask for the password again even with a session.
        case login
        /// Ask for consent again.
        case consent
        /// Let the user choose the account.
        case selectAccount = "select_account"
    }

    /// One authorization in flight: what the callback and the exchange are checked against. Codable, so an app
    /// that may be stopped while the browser shows can keep it; it holds the PKCE verifier: keep it like a secret.
    public struct Request: Sendable, Equatable, Codable {
        /// Where to send the browser.
        public let url: URL
        /// The `state` the callback must carry back.
        public let state: String
        /// The `nonce` the ID token must carry.
        public let nonce: String
        /// The PKCE verifier (32 random bytes, base64url), sent only with the code.
        public let codeVerifier: String
        /// The redirect URI the request named.
        public let redirectURI: URL
        /// The level asked for (`acr_values`): a token below it is refused.
        public let minimumLevel: AuthenticationLevel?
        let issuerRequired: Bool
        /// The RFC 9396 authorization details pushed with the request (a JSON array), if any: the token endpoint
        /// must return the same.
        public var authorizationDetails: String? = nil
    }

    /// The issuer as configured.
    public let issuer: URL
    /// This app's client id.
    public let clientID: String
    /// Where the provider sends the browser back.
    public let redirectURI: URL
    /// The scopes asked for; `openid` is always among them.
    public let scopes: [String]
    let transport: any HTTPTransport
    let clock: any TrifactorClock
    let crypto: any TokenCrypto
    let verifier: IDTokenVerifier
    let cache = Locked(Cache())
    /// A confidential client's keys; nil for a public client.
    let credentials: ClientCredentials?

    struct Cache {
        var metadata: Metadata?
        var keys: JSONWebKeySet?
        /// The provider's latest DPoP nonce (RFC 9449 §8), sent in the next proofs.
        var dpopNonce: String?
        /// When `keys` were read.
        var keysReadAt: Date?
    }

    /// - Parameters:
    ///   - issuer: the provider's issuer, exactly as its metadata names it (`https://auth.example.com`).
    ///   - clientID: this app's client id, registered with `--auth-method none`.
    ///   - redirectURI: registered with the client: a custom scheme (`com.example.bank:/oauth`) or a loopback
    ///     address (`http://127.0.0.1:PORT/callback`, any port).
    ///   - scopes: the scopes to ask for; `openid` is added when missing.
    ///   - crypto: SHA-256, random bytes and signature checks: `CryptoKitTokenCrypto` on Apple platforms,
    ///     `OpenSSLTokenCrypto` from `TrifactorKitVault` on Linux.
    ///   - transport: how requests travel; `URLSessionTransport` by default.
    ///   - clock: the time ID tokens' expiry is checked against.
    ///   - leeway: how many seconds past its `exp` an ID token is still taken (clocks disagree).
    public convenience init(
        issuer: URL, clientID: String, redirectURI: URL, scopes: [String] = ["openid"], crypto: any TokenCrypto,
        transport: any HTTPTransport = URLSessionTransport(), clock: any TrifactorClock = SystemClock(),
        leeway: TimeInterval = 60
    ) {
        self.init(
            configuredFor: issuer, clientID: clientID, redirectURI: redirectURI, scopes: scopes, credentials: nil,
            crypto: crypto, transport: transport, clock: clock, leeway: leeway)
    }

    /// A confidential client's value, for a server that keeps its keys: it authenticates with `private_key_jwt`
    /// (RFC 7523), pushes its requests (RFC 9126) and, with a DPoP key, has its tokens bound to that key (RFC 9449),
    /// as FAPI 2.0 asks.
    /// - Parameters:
    ///   - issuer: the provider's issuer, exactly as its metadata names it.
    ///   - clientID: this client's id, registered with `--auth-method private_key_jwt` and the public key of
    ///     `credentials.assertionKey` in its JWK Set.
    ///   - redirectURI: the https (or loopback) address registered with the client.
    ///   - scopes: the scopes to ask for; `openid` is added when missing.
    ///   - credentials: the keys it signs its assertions and DPoP proofs with.
    ///   - crypto: SHA-256, random bytes and signature checks.
    ///   - transport: how requests travel; `URLSessionTransport` by default.
    ///   - clock: the time tokens and assertions are dated and checked by.
    ///   - leeway: how many seconds past its `exp` an ID token is still taken.
    public convenience init(
        issuer: URL, clientID: String, redirectURI: URL, scopes: [String] = ["openid"],
        credentials: ClientCredentials, crypto: any TokenCrypto,
        transport: any HTTPTransport = URLSessionTransport(), clock: any TrifactorClock = SystemClock(),
        leeway: TimeInterval = 60
    ) {
        self.init(
            configuredFor: issuer, clientID: clientID, redirectURI: redirectURI, scopes: scopes,
            credentials: credentials, crypto: crypto, transport: transport, clock: clock, leeway: leeway)
    }

    private init(
        configuredFor issuer: URL, clientID: String, redirectURI: URL, scopes: [String],
        credentials: ClientCredentials?, crypto: any TokenCrypto, transport: any HTTPTransport,
        clock: any TrifactorClock, leeway: TimeInterval
    ) {
        self.issuer = issuer
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.scopes = scopes.contains("openid") ? scopes : ["openid"] + scopes
        self.transport = transport
        self.clock = clock
        self.crypto = crypto
        self.credentials = credentials
        verifier = IDTokenVerifier(issuer: issuer.absoluteString, clientID: clientID, crypto: crypto, leeway: leeway)
    }

    /// The provider's metadata, read once from `/.well-known/openid-configuration` under the issuer.
    /// - Throws: `TrifactorError` `.providerMismatch` when it names another issuer or lacks an endpoint,
    ///   `.transport`, `.unexpectedResponse`.
    public func metadata() async throws(TrifactorError) -> Metadata {
        if let known = cache.withLock({ $0.metadata }) { return known }
        var base = issuer.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        let json = try await getJSON(URL(string: base + "/.well-known/openid-configuration")!)
        guard json["issuer"] as? String == issuer.absoluteString else {
            throw .providerMismatch("The provider at \(issuer.host ?? "that address") names another issuer.")
        }
        func endpoint(_ name: String) -> URL? { (json[name] as? String).flatMap(URL.init(string:)) }
        guard let authorize = endpoint("authorization_endpoint"), let token = endpoint("token_endpoint"),
            let jwks = endpoint("jwks_uri")
        else { throw .providerMismatch("The provider's metadata lacks an endpoint this app needs.") }
        if let methods = json["code_challenge_methods_supported"] as? [String], !methods.contains("S256") {
            throw .providerMismatch("The provider does not support PKCE with S256.")
        }
        let metadata = Metadata(
            issuer: issuer.absoluteString, authorizationEndpoint: authorize, tokenEndpoint: token, jwksURI: jwks,
            endSessionEndpoint: endpoint("end_session_endpoint"),
            issuerInAuthorizationResponse: json["authorization_response_iss_parameter_supported"] as? Bool ?? false,
            deviceAuthorizationEndpoint: endpoint("device_authorization_endpoint"),
            pushedAuthorizationRequestEndpoint: endpoint("pushed_authorization_request_endpoint"),
            backchannelAuthenticationEndpoint: endpoint("backchannel_authentication_endpoint"))
        cache.withLock { $0.metadata = metadata }
        return metadata
    }

    /// The PKCE S256 challenge of `verifier`: the base64url SHA-256 of its ASCII (RFC 7636 §4.2).
    public func codeChallenge(for verifier: String) -> String {
        Base64URL.encode(crypto.sha256(Data(verifier.utf8)))
    }

    /// A new authorization request: a fresh PKCE verifier (32 random bytes), `state` and `nonce`.
    /// - Parameters:
    ///   - level: the lowest level the app accepts, sent as `acr_values`; a token below it is refused.
    ///   - prompt: what the sign-in page must ask.
    ///   - loginHint: the email address to fill in.
    /// - Throws: what `metadata()` throws.
    public func authorizationRequest(
        level: AuthenticationLevel? = nil, prompt: Prompt? = nil, loginHint: String? = nil
    ) async throws(TrifactorError) -> Request {
        let metadata = try await metadata()
        let verifier = Base64URL.encode(crypto.randomBytes(32))
        let state = Base64URL.encode(crypto.randomBytes(16))
        let nonce = Base64URL.encode(crypto.randomBytes(16))
        var fields = [
            ("response_type", "code"), ("client_id", clientID), ("redirect_uri", redirectURI.absoluteString),
            ("scope", scopes.joined(separator: " ")), ("state", state), ("nonce", nonce),
            ("code_challenge", codeChallenge(for: verifier)), ("code_challenge_method", "S256"),
        ]
        if let level { fields.append(("acr_values", level.rawValue)) }
        if let prompt { fields.append(("prompt", prompt.rawValue)) }
        if let loginHint { fields.append(("login_hint", loginHint)) }
        var components = URLComponents(url: metadata.authorizationEndpoint, resolvingAgainstBaseURL: false)!
        let query = Self.formEncoded(fields)
        components.percentEncodedQuery = components.percentEncodedQuery.map { $0 + "&" + query } ?? query
        return Request(
            url: components.url!, state: state, nonce: nonce, codeVerifier: verifier, redirectURI: redirectURI,
            minimumLevel: level, issuerRequired: metadata.issuerInAuthorizationResponse)
    }

    /// The code in `callback`, the URL the provider sent the browser back to, once it is shown to answer `request`:
    /// the same `state`, and the issuer's `iss` (RFC 9207) when it carries one or the provider promised it.
    /// - Throws: `TrifactorError` `.callbackRejected` for another `state` or `iss`, or no code;
    ///   `.authorizationRefused` with the provider's `error` (`access_denied`, `login_required`, …).
    public func code(from callback: URL, for request: Request) throws(TrifactorError) -> String {
        var fields: [String: String] = [:]
        for item in URLComponents(url: callback, resolvingAgainstBaseURL: false)?.queryItems ?? [] {
            // A field given twice is suspect: keep neither.
            fields[item.name] = fields[item.name] == nil ? (item.value ?? "") : ""
        }
        guard fields["state"] == request.state else {
            throw .callbackRejected("The sign-in's answer does not belong to this sign-in (another state).")
        }
        if let iss = fields["iss"], iss != issuer.absoluteString {
            throw .callbackRejected("The sign-in's answer came from another provider (another iss).")
        }
        if fields["iss"] == nil, request.issuerRequired {
            throw .callbackRejected("The sign-in's answer does not name its provider (no iss).")
        }
        if let error = fields["error"] {
            throw .authorizationRefused(OAuthError(error: error, errorDescription: fields["error_description"]))
        }
        guard let code = fields["code"], !code.isEmpty else {
            throw .callbackRejected("The sign-in's answer holds no code.")
        }
        return code
    }

    /// Signs the user in: a new request, the browser, the callback's checks, the exchange and the ID token's.
    /// - Parameters:
    ///   - browser: shows the provider's page and returns the callback URL.
    ///   - level: the lowest level the app accepts.
    ///   - prompt: what the sign-in page must ask.
    ///   - loginHint: the email address to fill in.
    /// - Throws: `TrifactorError`: `.cancelled` when the user closed the browser, and what `code(from:for:)` and
    ///   `exchange(code:for:)` throw.
    public func signIn(
        using browser: any AuthorizationBrowser, level: AuthenticationLevel? = nil, prompt: Prompt? = nil,
        loginHint: String? = nil
    ) async throws(TrifactorError) -> Tokens {
        let request = try await authorizationRequest(level: level, prompt: prompt, loginHint: loginHint)
        let callback = try await browser.open(request.url, redirectURI: request.redirectURI)
        return try await exchange(code: try code(from: callback, for: request), for: request)
    }

    /// `fields` as `application/x-www-form-urlencoded`, every byte but the unreserved ones escaped.
    static func formEncoded(_ fields: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        allowed = allowed.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        func escape(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: allowed) ?? "" }
        return fields.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }
}
