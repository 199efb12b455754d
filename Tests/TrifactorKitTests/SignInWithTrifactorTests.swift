import Crypto
import Foundation
import Testing
import TrifactorKit
import TrifactorKitTesting
import TrifactorKitVault

/// Sign in with Trifactor against a canned provider: the request it builds, the callbacks and ID tokens it refuses.
@Suite("Sign in with Trifactor: PKCE, the callback's checks and the ID token's")
struct SignInWithTrifactorTests {
    static let clock = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))

    /// A provider, its client, and a request whose nonce the provider puts in its next ID token.
    static func started(level: AuthenticationLevel? = nil) async throws -> (
        FakeProvider, SignInWithTrifactor, SignInWithTrifactor.Request
    ) {
        let provider = try FakeProvider()
        let client = provider.client(clock: clock)
        let request = try await client.authorizationRequest(level: level)
        provider.nonceSent = request.nonce
        return (provider, client, request)
    }

    static func callback(_ request: SignInWithTrifactor.Request, _ fields: [String: String]) -> URL {
        var components = URLComponents(string: "com.example.bank:/oauth")!
        components.queryItems = fields.map { URLQueryItem(name: $0.key, value: $0.value) }
        return components.url!
    }

    @Test("the PKCE S256 challenge is the base64url SHA-256 of the verifier (RFC 7636 Appendix B)")
    func pkceKnownAnswer() throws {
        let client = try FakeProvider().client(clock: Self.clock)
        #expect(
            client.codeChallenge(for: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
                == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    }

    @Test("the authorization request carries the client, S256, a fresh state and nonce, acr_values, prompt and hint")
    func authorizationRequest() async throws {
        let provider = try FakeProvider()
        let client = provider.client(clock: Self.clock)
        let request = try await client.authorizationRequest(
            level: .hardwareKey, prompt: .login, loginHint: "ann+bank@example.com")
        let items = URLComponents(url: request.url, resolvingAgainstBaseURL: false)!.queryItems!
        let query = Dictionary(uniqueKeysWithValues: items.map { ($0.name, $0.value ?? "") })
        #expect(request.url.absoluteString.hasPrefix("https://auth.example.com/authorize?"))
        #expect(query["response_type"] == "code")
        #expect(query["client_id"] == "bank-app")
        #expect(query["redirect_uri"] == "com.example.bank:/oauth")
        #expect(query["scope"] == "openid email")
        #expect(query["code_challenge_method"] == "S256")
        #expect(query["code_challenge"] == client.codeChallenge(for: request.codeVerifier))
        #expect(query["state"] == request.state && query["nonce"] == request.nonce)
        #expect(query["acr_values"] == "urn:trifactor:acr:hwk")
        #expect(query["prompt"] == "login")
        // A '+' left unescaped would reach the provider as a space.
        #expect(request.url.absoluteString.contains("login_hint=ann%2Bbank%40example.com"))
        // 32 random bytes, base64url without padding: 43 characters.
        #expect(request.codeVerifier.count == 43)
        let again = try await client.authorizationRequest()
        #expect(
            again.state != request.state && again.nonce != request.nonce && again.codeVerifier != request.codeVerifier)
    }

    @Test("metadata naming another issuer is refused (OpenID Connect Discovery §4.3)")
    func otherIssuer() async throws {
        let provider = try FakeProvider()
        provider.namingIssuer("https://evil.example.com")
        await #expect(throws: TrifactorError.self) {
            _ = try await provider.client(clock: Self.clock).authorizationRequest()
        }
        do {
            _ = try await provider.client(clock: Self.clock).metadata()
        } catch {
            #expect(error.code == .providerMismatch)
        }
    }

    @Test("a callback with another state, another iss, no iss, or the provider's error is refused")
    func callbacks() async throws {
        let (_, client, request) = try await Self.started()
        let iss = FakeProvider.issuer
        let refused: [([String: String], TrifactorError.Code)] = [
            (["code": "c", "state": "forged", "iss": iss], .callbackRejected),
            (["code": "c", "state": request.state, "iss": "https://evil.example.com"], .callbackRejected),
            (["code": "c", "state": request.state], .callbackRejected),
            (["error": "access_denied", "state": request.state, "iss": iss], .authorizationRefused),
            (["error": "access_denied", "state": "forged", "iss": iss], .callbackRejected),
            (["state": request.state, "iss": iss], .callbackRejected),
        ]
        for (fields, code) in refused {
            #expect(throws: TrifactorError.self, "\(fields)") {
                _ = try client.code(from: Self.callback(request, fields), for: request)
            }
            do {
                _ = try client.code(from: Self.callback(request, fields), for: request)
            } catch {
                #expect(error.code == code, "\(fields)")
            }
        }
        do {
            _ = try client.code(
                from: Self.callback(request, ["error": "access_denied", "state": request.state, "iss": iss]),
                for: request)
        } catch {
            #expect(error.oauthError?.error == "access_denied")
        }
        let code = try client.code(
            from: Self.callback(request, ["code": "c-1", "state": request.state, "iss": iss]), for: request)
        #expect(code == "c-1")
    }

    @Test("a code is exchanged with its verifier for a verified ID token; a refresh keeps the new refresh token")
    func exchangeAndRefresh() async throws {
        let (provider, client, request) = try await Self.started(level: .multiFactor)
        let tokens = try await client.exchange(code: "c-1", for: request)
        #expect(provider.lastTokenForm["code_verifier"] == request.codeVerifier)
        #expect(provider.lastTokenForm["grant_type"] == "authorization_code")
        #expect(provider.lastTokenForm["client_id"] == "bank-app")
        #expect(tokens.idToken.subject == "user-1")
        #expect(tokens.idToken.level == .multiFactor)
        #expect(tokens.idToken.methods == ["pwd", "otp", "mfa"])
        #expect(tokens.idToken.sessionID == "s-1")
        #expect(tokens.refreshToken == "rt-0")
        let refreshed = try await client.refresh(tokens)
        #expect(provider.lastTokenForm["refresh_token"] == "rt-0")
        #expect(refreshed.refreshToken == "rt-1" && refreshed.accessToken == "at-1")
        let again = try await client.refresh(refreshed)
        #expect(provider.lastTokenForm["refresh_token"] == "rt-1")
        #expect(again.refreshToken == "rt-2")
        do {
            _ = try await client.exchange(code: "used", for: request)
            Issue.record("a used code must be refused")
        } catch {
            #expect(error.oauthError?.error == "invalid_grant")
        }
    }

    @Test(
        "an ID token with another nonce, audience, issuer or azp, expired, badly signed, or below the level asked for is refused"
    )
    func idTokenChecks() async throws {
        let stranger = try P256SigningKey.generate()
        let cases: [(String, @Sendable ([String: Any]) -> [String: Any])] = [
            ("nonce", { $0.merging(["nonce": "another"]) { $1 } }),
            ("audience", { $0.merging(["aud": "other-app"]) { $1 } }),
            ("azp", { $0.merging(["aud": ["bank-app", "other-app"], "azp": "other-app"]) { $1 } }),
            ("azp missing", { $0.merging(["aud": ["bank-app", "other-app"]]) { $1 } }),
            ("issuer", { $0.merging(["iss": "https://evil.example.com"]) { $1 } }),
            ("expired", { $0.merging(["exp": 1_800_000_000 - 61]) { $1 } }),
            ("level", { $0.merging(["acr": "urn:trifactor:acr:password"]) { $1 } }),
            ("unknown level", { $0.merging(["acr": "urn:example:strong"]) { $1 } }),
            ("no subject", { $0.filter { $0.key != "sub" } }),
        ]
        for (name, change) in cases {
            let (provider, client, request) = try await Self.started(level: .multiFactor)
            provider.tokens(change)
            do {
                _ = try await client.exchange(code: "c", for: request)
                Issue.record("an ID token with a wrong \(name) must be refused")
            } catch {
                #expect(error.code == .idTokenRejected, "\(name)")
            }
        }
        let (provider, client, request) = try await Self.started()
        provider.signing(with: stranger)
        do {
            _ = try await client.exchange(code: "c", for: request)
            Issue.record("a token signed by another key must be refused")
        } catch {
            #expect(error.code == .idTokenRejected)
            #expect(error.description == "The ID token's signature is not the provider's.")
        }
    }

    @Test("an ID token within the leeway, several audiences with azp, and a higher level than asked are accepted")
    func idTokenAccepted() async throws {
        let (provider, client, request) = try await Self.started(level: .multiFactor)
        provider.tokens {
            $0.merging([
                "exp": 1_800_000_000 - 30, "aud": ["bank-app", "api"], "azp": "bank-app",
                "acr": "urn:trifactor:acr:hwk",
            ]) { $1 }
        }
        let tokens = try await client.exchange(code: "c", for: request)
        #expect(tokens.idToken.level == .hardwareKey)
        #expect(tokens.idToken.audiences == ["bank-app", "api"])
    }

    @Test("an ID token whose header names alg none or an algorithm without a published key is refused")
    func algorithms() async throws {
        for algorithm in ["none", "RS256", "HS256"] {
            let (provider, client, request) = try await Self.started()
            provider.headerAlgorithm = algorithm
            do {
                _ = try await client.exchange(code: "c", for: request)
                Issue.record("alg \(algorithm) must be refused")
            } catch {
                #expect(error.code == .idTokenRejected, "\(algorithm)")
            }
        }
    }

    @Test("the Sign in with Trifactor error codes are stable")
    func stableCodes() {
        #expect(TrifactorError.Code.authorizationRefused.rawValue == "authorization_refused")
        #expect(TrifactorError.Code.callbackRejected.rawValue == "callback_rejected")
        #expect(TrifactorError.Code.idTokenRejected.rawValue == "id_token_rejected")
        #expect(TrifactorError.Code.providerMismatch.rawValue == "provider_mismatch")
        #expect(TrifactorError.Code.cancelled.rawValue == "cancelled")
    }
}
