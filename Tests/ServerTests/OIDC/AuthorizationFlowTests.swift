import Testing

@testable import TrifactorServer

/// The authorization flow's decisions, without IO: what the browser is shown
/// next for each session, prompt, max_age and acr_values.
@Suite("The authorization flow decides the next page from the session and the request")
struct AuthorizationFlowTests {
    static let client = OIDCClient(
        id: "rp-1", name: "Relying Party", secretHash: nil, authMethod: .clientSecretBasic,
        redirectURIs: ["https://rp.example/cb"], postLogoutRedirectURIs: [], grantTypes: [.authorizationCode],
        scopes: ["openid", "email"], firstParty: false, profileInIDToken: false, idTokenAlgorithm: "ES256", jwks: nil,
        logoURI: nil, backchannelLogoutURI: nil, registrationTokenHash: nil, registeredBy: .host, createdAt: 0,
        updatedAt: 0)

    static func flow(_ query: [String: String] = [:]) throws -> AuthorizationFlow {
        var p = [
            "response_type": "code", "client_id": "rp-1", "redirect_uri": "https://rp.example/cb", "scope": "openid",
        ]
        for (k, v) in query { p[k] = v }
        let request = try AuthorizationRequest.parse(p, client: client, redirectURI: "https://rp.example/cb")
        return AuthorizationFlow(id: "f", request: request, progress: .init(), createdAt: 0, expiresAt: 1_800_000)
    }

    static func session(_ level: ACR = .mfa, authTime: Int64 = 1_000, hardware: Bool = false, factor: Bool = true)
        -> AuthorizationFlow.Session
    {
        .init(
            userID: "u1", sessionID: "s1", level: level, authTime: authTime, hasSecondFactor: factor,
            hasHardwareKey: hardware)
    }

    @Test("no session: the sign-in page; with prompt=none, login_required back to the client")
    func noSession() throws {
        #expect(try Self.flow().next(session: nil, consented: false, firstParty: false, now: 2_000) == .signIn)
        #expect(
            try Self.flow(["prompt": "none"]).next(session: nil, consented: false, firstParty: false, now: 2_000)
                == .fail(.loginRequired))
    }

    @Test("a session that consented before gets its code at once; a first visit asks for consent")
    func consent() throws {
        let f = try Self.flow()
        #expect(f.next(session: Self.session(), consented: true, firstParty: false, now: 2_000) == .issueCode)
        #expect(f.next(session: Self.session(), consented: false, firstParty: false, now: 2_000) == .consent)
        #expect(f.next(session: Self.session(), consented: false, firstParty: true, now: 2_000) == .issueCode)
        let silent = try Self.flow(["prompt": "none"])
        #expect(
            silent.next(session: Self.session(), consented: false, firstParty: false, now: 2_000)
                == .fail(.consentRequired))
    }

    @Test("prompt=login and an exceeded max_age ask for the password again, until the user proved it in this flow")
    func reauthentication() throws {
        var login = try Self.flow(["prompt": "login"])
        #expect(login.next(session: Self.session(), consented: true, firstParty: false, now: 2_000) == .signIn)
        login.progress.authenticatedHere = true
        #expect(login.next(session: Self.session(), consented: true, firstParty: false, now: 2_000) == .issueCode)
        let aged = try Self.flow(["max_age": "1"])
        #expect(
            aged.next(session: Self.session(authTime: 1_000), consented: true, firstParty: false, now: 1_900)
                == .issueCode)
        #expect(
            aged.next(session: Self.session(authTime: 1_000), consented: true, firstParty: false, now: 2_500) == .signIn
        )
        let zero = try Self.flow(["max_age": "0"])
        #expect(
            zero.next(session: Self.session(authTime: 2_000), consented: true, firstParty: false, now: 2_001) == .signIn
        )
    }

    @Test("acr_values above the session's level steps up; none to step up with is the add-a-factor page")
    func stepUp() throws {
        let hwk = try Self.flow(["acr_values": "urn:trifactor:acr:hwk"])
        #expect(
            hwk.next(session: Self.session(.mfa, hardware: true), consented: true, firstParty: false, now: 2_000)
                == .stepUp(to: .hardwareKey))
        #expect(
            hwk.next(session: Self.session(.hardwareKey), consented: true, firstParty: false, now: 2_000) == .issueCode)
        let mfa = try Self.flow(["acr_values": "urn:trifactor:acr:mfa"])
        #expect(
            mfa.next(session: Self.session(.password, factor: false), consented: true, firstParty: false, now: 2_000)
                == .addSecondFactor)
        let silent = try Self.flow(["acr_values": "urn:trifactor:acr:mfa", "prompt": "none"])
        #expect(
            silent.next(session: Self.session(.password), consented: true, firstParty: false, now: 2_000)
                == .fail(.interactionRequired))
    }

    @Test("an unknown acr value never lowers the bar: alone it asks for the highest level")
    func unknownACR() throws {
        #expect(ACR.requested(["urn:example:weak"]) == .hardwareKey)
        #expect(ACR.requested(["urn:example:weak", "urn:trifactor:acr:mfa"]) == .mfa)
        #expect(ACR.requested([]) == nil)
    }

    @Test("an id_token_hint naming another user is the sign-in page, or login_required with prompt=none")
    func hintedSubject() throws {
        var f = try Self.flow()
        f = AuthorizationFlow(
            id: f.id,
            request: {
                var r = f.request
                r.hintedSubject = "someone-else"
                return r
            }(), progress: f.progress, createdAt: 0, expiresAt: 1)
        #expect(f.next(session: Self.session(), consented: true, firstParty: false, now: 2_000) == .signIn)
    }
}
