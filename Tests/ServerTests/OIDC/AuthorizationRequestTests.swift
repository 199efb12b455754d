import Testing

@testable import TrifactorServer

/// Authorization request parameters and redirect URIs, checked before any page.
@Suite("Authorization requests and redirect URIs are checked to the letter")
struct AuthorizationRequestTests {
    static let base = [
        "response_type": "code", "client_id": "rp-1", "redirect_uri": "https://rp.example/cb", "scope": "openid",
    ]

    static func parse(_ change: [String: String?], public isPublic: Bool = false) -> AuthorizationError? {
        var p = base
        for (k, v) in change { p[k] = v }
        var client = AuthorizationFlowTests.client
        if isPublic { client.authMethod = .none }
        do {
            _ = try AuthorizationRequest.parse(p, client: client, redirectURI: "https://rp.example/cb")
            return nil
        } catch { return error }
    }

    static let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

    @Test("PKCE: S256 is accepted, plain is refused, a public client must send a challenge")
    func pkce() {
        #expect(Self.parse(["code_challenge": Self.challenge, "code_challenge_method": "S256"]) == nil)
        #expect(
            Self.parse(["code_challenge": Self.challenge, "code_challenge_method": "plain"])?.code == "invalid_request")
        #expect(Self.parse(["code_challenge": Self.challenge])?.code == "invalid_request")
        #expect(Self.parse([:], public: true)?.code == "invalid_request")
        #expect(Self.parse(["code_challenge": "short", "code_challenge_method": "S256"])?.code == "invalid_request")
    }

    @Test("the documented errors: request objects, other response types, unknown scopes, prompt=none with others")
    func errors() {
        #expect(Self.parse(["request": "eyJ..."])?.code == "request_not_supported")
        #expect(Self.parse(["request_uri": "https://x"])?.code == "request_uri_not_supported")
        #expect(Self.parse(["response_type": "token"])?.code == "unsupported_response_type")
        #expect(Self.parse(["response_type": nil])?.code == "invalid_request")
        #expect(Self.parse(["scope": "openid phone"])?.code == "invalid_scope")
        #expect(Self.parse(["prompt": "none login"])?.code == "invalid_request")
        #expect(Self.parse(["prompt": "sometimes"])?.code == "invalid_request")
        #expect(Self.parse(["max_age": "-1"])?.code == "invalid_request")
        #expect(Self.parse(["response_mode": "fragment"])?.code == "invalid_request")
        #expect(Self.parse(["state": String(repeating: "s", count: 2049)])?.code == "invalid_request")
        #expect(Self.parse(["resource": "https://api.example/#frag"])?.code == "invalid_target")
    }

    @Test("redirect URIs match exactly; only a loopback IP literal matches on any port (RFC 8252 §7.3)")
    func redirectMatching() {
        let registered = ["https://rp.example/cb", "http://127.0.0.1/callback", "com.example.app:/oauth"]
        #expect(RedirectURI.matches("https://rp.example/cb", registered: registered))
        for variant in [
            "https://rp.example/cb/", "https://rp.example/CB", "https://rp.example/cb?x=1",
            "https://user@rp.example/cb",
            "https://rp.example/cb#f", "https://rp.example:8443/cb", "http://rp.example/cb", "https://RP.example/cb",
        ] {
            #expect(!RedirectURI.matches(variant, registered: registered), "\(variant)")
        }
        #expect(RedirectURI.matches("http://127.0.0.1:51234/callback", registered: registered))
        #expect(!RedirectURI.matches("http://127.0.0.1:51234/other", registered: registered))
        #expect(RedirectURI.matches("com.example.app:/oauth", registered: registered))
    }

    @Test("registration refuses fragments, user info, plain http off loopback, and private schemes for web clients")
    func registration() {
        #expect(RedirectURI.refusal("https://rp.example/cb", isPublic: false) == nil)
        #expect(RedirectURI.refusal("http://127.0.0.1:8080/cb", isPublic: false) == nil)
        #expect(RedirectURI.refusal("https://rp.example/cb#x", isPublic: false) != nil)
        #expect(RedirectURI.refusal("https://u:p@rp.example/cb", isPublic: false) != nil)
        #expect(RedirectURI.refusal("http://rp.example/cb", isPublic: false) != nil)
        #expect(RedirectURI.refusal("com.example.app:/cb", isPublic: false) != nil)
        #expect(RedirectURI.refusal("com.example.app:/cb", isPublic: true) == nil)
        #expect(RedirectURI.refusal("myapp:/cb", isPublic: true) != nil)
        #expect(RedirectURI.refusal("javascript:alert(1)", isPublic: true) != nil)
    }

    @Test("a code verifier must hash to the challenge; a verifier without a challenge is a downgrade and refused")
    func verifier() {
        // RFC 7636 Appendix B.
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        #expect(TokenService.checkPKCE(challenge: Self.challenge, verifier: verifier) == nil)
        #expect(TokenService.checkPKCE(challenge: Self.challenge, verifier: verifier + "x") != nil)
        #expect(TokenService.checkPKCE(challenge: Self.challenge, verifier: nil) != nil)
        #expect(TokenService.checkPKCE(challenge: nil, verifier: verifier) != nil)
        #expect(TokenService.checkPKCE(challenge: nil, verifier: nil) == nil)
    }
}
