import Crypto
import Foundation
import TrifactorKit
import TrifactorKitTesting
import TrifactorKitVault

/// A canned OpenID Provider for `SignInWithTrifactor`: discovery, JWKS and the token endpoint, with ID tokens
/// signed here by a P-256 key (OpenSSL's DER turned into JOSE's raw R and S). Tests change what it answers.
final class FakeProvider: @unchecked Sendable {
    // @unchecked Sendable: the mutable fields are only touched under `lock`.
    static let issuer = "https://auth.example.com"
    static let clientID = "bank-app"
    let key: P256SigningKey
    let keyID = "key-1"
    private let lock = NSLock()
    private var metadataIssuer = FakeProvider.issuer
    /// Changes the claims of the next ID tokens.
    private var claims: @Sendable ([String: Any]) -> [String: Any] = { $0 }
    private var signer: P256SigningKey?
    private(set) var lastTokenForm: [String: String] = [:]
    var refreshCount = 0

    init() throws { key = try P256SigningKey.generate() }

    func namingIssuer(_ issuer: String) { lock.withLock { metadataIssuer = issuer } }
    /// Changes the next ID tokens' claims.
    func tokens(_ change: @escaping @Sendable ([String: Any]) -> [String: Any]) { lock.withLock { claims = change } }
    /// Signs the next ID tokens with `key` instead of the published one.
    func signing(with key: P256SigningKey) { lock.withLock { signer = key } }

    lazy var transport = RecordingTransport { [unowned self] request in try self.answer(request) }

    func client(clock: ManualClock, redirect: String = "com.example.bank:/oauth") -> SignInWithTrifactor {
        SignInWithTrifactor(
            issuer: URL(string: Self.issuer)!, clientID: Self.clientID, redirectURI: URL(string: redirect)!,
            scopes: ["openid", "email"], crypto: OpenSSLTokenCrypto(), transport: transport, clock: clock)
    }

    private func answer(_ request: HTTPRequest) throws -> HTTPResponse {
        switch request.url.path {
        case "/.well-known/openid-configuration":
            return json([
                "issuer": lock.withLock { metadataIssuer }, "authorization_endpoint": Self.issuer + "/authorize",
                "token_endpoint": Self.issuer + "/token", "jwks_uri": Self.issuer + "/jwks",
                "code_challenge_methods_supported": ["S256"], "authorization_response_iss_parameter_supported": true,
            ])
        case "/jwks":
            let (x, y) = try key.publicCoordinates()
            return json([
                "keys": [
                    [
                        "kty": "EC", "crv": "P-256", "kid": keyID, "use": "sig", "alg": "ES256",
                        "x": Self.base64url(Data(x)), "y": Self.base64url(Data(y)),
                    ]
                ]
            ])
        case "/token":
            let form = Self.form(request.body ?? Data())
            lock.withLock { lastTokenForm = form }
            if form["code"] == "used" { return json(["error": "invalid_grant"], status: 400) }
            let refreshing = form["grant_type"] == "refresh_token"
            let now = 1_800_000_000
            var base: [String: Any] = [
                "iss": Self.issuer, "sub": "user-1", "aud": Self.clientID, "exp": now + 300, "iat": now,
                "auth_time": now - 10, "acr": "urn:trifactor:acr:mfa", "amr": ["pwd", "otp", "mfa"], "sid": "s-1",
            ]
            if !refreshing, let nonce = nonceSent { base["nonce"] = nonce }
            let count = lock.withLock {
                refreshCount += refreshing ? 1 : 0
                return refreshCount
            }
            return json([
                "access_token": "at-\(count)", "token_type": "Bearer", "expires_in": 300,
                "refresh_token": "rt-\(count)", "id_token": try sign(lock.withLock { claims }(base)),
            ])
        default:
            return HTTPResponse(status: 404, headers: [:], body: Data())
        }
    }

    /// The nonce of the last authorization request (tests set it from the request they made).
    var nonceSent: String? {
        get { lock.withLock { _nonce } }
        set { lock.withLock { _nonce = newValue } }
    }
    private var _nonce: String?

    /// The `alg` the next ID tokens' header names (they are signed with ES256 whatever it says).
    var headerAlgorithm: String {
        get { lock.withLock { _algorithm } }
        set { lock.withLock { _algorithm = newValue } }
    }
    private var _algorithm = "ES256"

    func sign(_ claims: [String: Any]) throws -> String {
        let algorithm = headerAlgorithm
        let header = try JSONSerialization.data(withJSONObject: ["alg": algorithm, "kid": keyID, "typ": "JWT"])
        let payload = try JSONSerialization.data(withJSONObject: claims)
        let input = Self.base64url(header) + "." + Self.base64url(payload)
        let der = try (lock.withLock { signer } ?? key).signature(for: Array(input.utf8))
        let raw = ECDSASignature.raw(fromDER: der)!
        return input + "." + Self.base64url(Data(raw))
    }

    private func json(_ object: Any, status: Int = 200) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: ["Content-Type": "application/json"],
            body: try! JSONSerialization.data(withJSONObject: object))
    }

    static func base64url(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func form(_ body: Data) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
            fields[kv[0]] = kv.count > 1 ? kv[1] : ""
        }
        return fields
    }
}
