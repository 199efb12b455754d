import Core
import Foundation
import HTTP
import ServerTestSupport
import Testing
import TrifactorKit
import TrifactorKitTesting
import TrifactorServer
import TrifactorTestSupport

@Suite("TrifactorKit against trifactord: sign-in")
struct SDKSignInTests {
    @Test(
        "sign-up, a TOTP factor, then a sign-in resolved with it: a result with typed hints, never an error",
        arguments: Backend.all)
    func totpResolver(backend: Backend) async throws {
        try await backend.withLiveServer { server in
            let client = try await server.sdkUser("kit@example.com")
            #expect(try await client.currentSession().user.emailVerified)
            let (factor, secret) = try await server.sdkEnrollTOTP(client)
            #expect(factor.kind == "totp")
            #expect(try await client.factors().map(\.enrollmentID) == [factor.enrollmentID])
            try await client.signOut()
            #expect(try await !client.hasSession())

            guard
                case .secondFactorRequired(let resolver) = try await client.signIn(
                    email: "kit@example.com", password: "correct horse battery")
            else {
                Issue.record("a user with a factor must get a resolver")
                return
            }
            #expect(try await !client.hasSession())
            #expect(resolver.hints.map(\.kind) == [.totp])
            let remaining = resolver.expiresAt.timeIntervalSince(server.clock.clock.now())
            #expect(remaining > 290 && remaining <= 300)
            let hint = resolver.hints[0]
            guard case .enterCode = try await resolver.challenge(hint) else {
                Issue.record("TOTP sends nothing")
                return
            }
            let wrong = try #require(await refusal { try await resolver.resolve(hint, with: .code("000000")) })
            #expect(wrong.problem?.code == .invalidCode)
            #expect(wrong.problem?.status == 400)
            #expect(wrong.problem?.remainingAttempts == 4)  // five wrong end this sign-in
            #expect(!wrong.description.contains("000000"))
            server.clock.advance(30)
            let session = try await resolver.resolve(hint, with: .code(server.totpCode(secret)))
            #expect(session.aal == 2)
            #expect(session.methods.contains("otp"))
            #expect(try await client.currentSession().session.id == session.id)
        }
    }

    @Test(
        "phone and recovery codes through the resolver: the SMS is sent by challenge, a recovery code works once",
        arguments: Backend.all)
    func phoneAndRecovery(backend: Backend) async throws {
        try await backend.withLiveServer { server in
            let client = try await server.sdkUser("phone@example.com")
            let (totp, secret) = try await server.sdkEnrollTOTP(client)
            // Enrolling more needs a fresh second factor: step up with the app.
            server.clock.advance(30)
            let stepped = try await client.stepUp(FactorHint(totp), with: .code(server.totpCode(secret)))
            #expect(stepped.session.aal == 2)
            let pending = try await client.enrollPhone("+447400123456")
            #expect(pending.maskedPhone == "+********3456")
            let code = try #require(try server.lastCode(to: "447400123456"))
            let phone = try await pending.confirm(code: code, name: "Work phone")
            let codes = try await client.newRecoveryCodes()
            #expect(codes.count == 10)
            #expect(
                try await client.renameFactor(phone.enrollmentID, to: "  Work mobile ").displayName == "Work mobile")
            #expect(
                try await client.factors().first { $0.enrollmentID == phone.enrollmentID }?.displayName == "Work mobile"
            )
            #expect(
                await refusal { try await client.renameFactor(phone.enrollmentID, to: "bad\u{7}name") }?.problem?
                    .invalidFields.map(\.name) == ["display_name"])
            #expect(await refusal { try await client.renameFactor("no-such-factor", to: "x") }?.problem?.status == 404)
            try await client.signOut()

            guard
                case .secondFactorRequired(let resolver) = try await client.signIn(
                    email: "phone@example.com", password: "correct horse battery")
            else {
                Issue.record("expected a resolver")
                return
            }
            let phoneHint = try #require(resolver.hints.first { $0.id == phone.enrollmentID })
            #expect(phoneHint.kind == .phone(maskedNumber: "+********3456"))
            #expect(resolver.hints.contains { $0.kind == .recoveryCode })
            guard case .codeSent(let masked) = try await resolver.challenge(phoneHint) else {
                Issue.record("a phone challenge sends a code")
                return
            }
            #expect(masked == "+********3456")
            let sms = try #require(try server.lastCode(to: "447400123456"))
            // "Call me instead": the same code, spoken now.
            try await resolver.callInstead(phoneHint)
            let voice = try #require(try server.outbox(to: "447400123456").first { $0.channel == "voice" }?.text)
            #expect(voice.filter(\.isNumber).contains(sms))  // "1, 2, 3, …" spells the texted code
            #expect(
                await refusal {
                    try await resolver.callInstead(try #require(resolver.hints.first { $0.kind == .recoveryCode }))
                }?.problem?.status == 409)
            #expect(try await resolver.resolve(phoneHint, with: .code(sms)).methods.contains("sms"))
            try await client.signOut()

            guard
                case .secondFactorRequired(let again) = try await client.signIn(
                    email: "phone@example.com", password: "correct horse battery")
            else {
                Issue.record("expected a resolver")
                return
            }
            let recovery = try #require(again.hints.first { $0.kind == .recoveryCode })
            #expect(try await again.resolve(recovery, with: .code(codes[0])).methods.contains("lookup"))
            try await client.signOut()
            guard
                case .secondFactorRequired(let third) = try await client.signIn(
                    email: "phone@example.com", password: "correct horse battery")
            else {
                Issue.record("expected a resolver")
                return
            }
            let reused = await refusal { try await third.resolve(recovery, with: .code(codes[0])) }
            #expect(reused?.problem?.code == .invalidCode, "a recovery code works once")
            _ = totp
        }
    }

    @Test(
        "sessions are listed and revoked; a revoked token is forgotten by the client that held it",
        arguments: Backend.all)
    func sessionsAndRevoke(backend: Backend) async throws {
        try await backend.withLiveServer { server in
            let laptop = try await server.sdkUser("two@example.com")
            let phone = server.sdk(profile: "phone")
            guard
                case .signedIn(let phoneSession) = try await phone.signIn(
                    email: "two@example.com", password: "correct horse battery")
            else {
                Issue.record("no factor: signed in at once")
                return
            }
            let listed = try await laptop.sessions()
            #expect(listed.count == 2)
            #expect(listed.filter(\.current).count == 1)
            #expect(listed.contains { $0.id == phoneSession.id && $0.userAgent == "TrifactorKit/1" })
            try await laptop.revokeSession(phoneSession.id)
            #expect(
                await refusal { try await phone.currentSession() }?.problem?.status == 401,
                "a revoked session must not answer")
            #expect(try await !phone.hasSession())
            #expect(await refusal { try await phone.currentSession() } == .notSignedIn)
        }
    }

    @Test(
        "errors carry the server's code, status, request id, Retry-After and field names; a closed port is a transport failure"
    )
    func errorMapping() async throws {
        try await Backend.all[0].withLiveServer { server in
            let client = server.sdk()
            do {
                let problem = try #require(
                    await refusal { try await client.signUp(email: "not-an-email", password: "short") }?.problem)
                #expect(problem.code == .invalidFields)
                #expect(problem.status == 422)
                #expect(Set(problem.invalidFields.map(\.name)) == ["email", "password"])
                #expect(problem.requestID?.isEmpty == false)
            }
            _ = try await server.sdkUser("locked@example.com")
            var last: TrifactorError?
            for _ in 0..<6 {
                last = await refusal {
                    try await client.signIn(email: "locked@example.com", password: "wrong password here")
                }
            }
            #expect(last?.problem?.code == .tooManyAttempts)
            #expect((last?.problem?.retryAfter ?? 0) > 0)
            #expect(last.map { !$0.description.contains("wrong password here") } == true)

            let closed = TrifactorClient(server: URL(string: "http://127.0.0.1:1")!, secrets: MemorySecretStore())
            let unreachable = await refusal {
                try await closed.signIn(email: "a@example.com", password: "correct horse battery")
            }
            guard let failure = unreachable?.transportFailure else {
                Issue.record("expected a transport failure, got \(String(describing: unreachable))")
                return
            }
            #expect(failure.reason == .unreachable)
        }
    }
}

@Suite("Trusted proxies")
struct TrustedProxyTests {
    @Test(
        "a trusted proxy's X-Forwarded-For and X-Forwarded-User-Agent name the client; anyone else's are ignored",
        arguments: [true, false])
    func forwarded(trusted: Bool) async throws {
        let configuration = TestServer.configuration {
            $0.http.trustedProxies = TrustedProxies(parsing: trusted ? "10.0.0.0/8, 127.0.0.1" : "10.0.0.0/8")!
        }
        try await Backend.all[0].withLiveServer(configuration) { server in
            let bank = try await server.sdkUser("proxied@example.com").forwarding(
                clientAddress: "203.0.113.7", userAgent: "Mozilla/5.0 (iPhone)")
            guard
                case .signedIn = try await bank.signIn(email: "proxied@example.com", password: "correct horse battery")
            else {
                Issue.record("no factor: signed in")
                return
            }
            let current = try #require(try await bank.sessions().first { $0.current })
            #expect(current.ip == (trusted ? "203.0.113.7" : "127.0.0.1"))
            #expect(current.userAgent == (trusted ? "Mozilla/5.0 (iPhone)" : "TrifactorKit/1"))
        }
    }

    @Test(
        "a trusted proxy's brand, one of TRIFACTOR_BRANDS, names the texts, emails and app entry its calls cause; anyone else's, or another brand, is not",
        arguments: [true, false])
    func brand(trusted: Bool) async throws {
        let configuration = TestServer.configuration {
            $0.http.trustedProxies = TrustedProxies(parsing: trusted ? "10.0.0.0/8, 127.0.0.1" : "10.0.0.0/8")!
            $0.http.brands = ["Trifactor Bank"]
        }
        try await Backend.all[0].withLiveServer(configuration) { server in
            let user = try await server.sdkUser("branded@example.com")
            let bank = user.forwarding(
                clientAddress: "203.0.113.7", userAgent: "Mozilla/5.0 (iPhone)", brand: "Trifactor Bank")
            let expected = trusted ? "Trifactor Bank" : "Trifactor"
            let totp = try await bank.enrollTOTP()
            let uri = try #require(totp.otpauthURI)
            #expect(uri.contains("issuer=\(expected.replacingOccurrences(of: " ", with: "%20"))"), "\(uri)")
            _ = try await bank.enrollPhone("+447400123477")
            #expect(
                try server.outbox(to: "447400123477").first?.text.hasPrefix("\(expected): your verification code is")
                    == true)
            try await bank.requestPasswordReset(email: "branded@example.com")
            server.tick()
            let email = try #require(
                try server.outbox(to: "branded@example.com").first { $0.text.contains("reset code") })
            #expect(email.text.contains("Your \(expected) password reset code"))
            // A brand the operator did not list is not taken, even from a trusted proxy (a front proxy passing its clients' headers on).
            let odd = user.forwarding(clientAddress: "203.0.113.7", userAgent: nil, brand: "Call 0800 now")
            try await odd.requestPasswordReset(email: "branded@example.com")
            server.tick()
            #expect(
                try server.outbox(to: "branded@example.com").first { $0.text.contains("reset code") }?.text.contains(
                    "Your Trifactor password") == true)
        }
    }

    @Test("the client is the right-most hop that is not a trusted proxy; a malformed header is not taken")
    func hops() throws {
        let proxies = try #require(TrustedProxies(parsing: "10.0.0.0/8,::1"))
        #expect(
            proxies.client(
                peer: "10.1.2.3", forwardedFor: "198.51.100.1, 203.0.113.9, 10.0.0.5", userAgent: "a",
                forwardedUserAgent: nil
            ).address == "203.0.113.9")
        #expect(
            proxies.client(
                peer: "10.1.2.3", forwardedFor: "not-an-ip, 203.0.113.9", userAgent: nil, forwardedUserAgent: nil
            ).address == "10.1.2.3")
        #expect(
            proxies.client(peer: "::1", forwardedFor: "2001:db8::1", userAgent: nil, forwardedUserAgent: "b").userAgent
                == "b")
        #expect(
            proxies.client(peer: "192.0.2.1", forwardedFor: "203.0.113.9", userAgent: "a", forwardedUserAgent: "b") == (
                "192.0.2.1", "a"
            ))
        #expect(proxies.trusts("::ffff:10.9.9.9"))
        #expect(!proxies.trusts("11.0.0.1"))
        #expect(TrustedProxies(parsing: "10.0.0.0/33") == nil)
        #expect(TrustedProxies(parsing: "bank.internal") == nil)
    }
}

@Suite("Changing the password")
struct PasswordChangeTests {
    /// The refusal of one password change, or nil when it went through.
    static func attempt(_ client: TrifactorClient, _ current: String, _ new: String) async -> TrifactorError? {
        do {
            try await client.changePassword(current: current, new: new)
            return nil
        } catch {
            return error
        }
    }

    @Test(
        "the current password and a fresh second factor are asked; other sessions end; the old password stops working",
        arguments: Backend.all)
    func change(backend: Backend) async throws {
        try await backend.withLiveServer { server in
            let client = try await server.sdkUser("change@example.com")
            let (totp, secret) = try await server.sdkEnrollTOTP(client)
            let other = server.sdk(profile: "other")
            guard
                case .secondFactorRequired(let resolver) = try await other.signIn(
                    email: "change@example.com", password: "correct horse battery")
            else {
                Issue.record("expected a resolver")
                return
            }
            server.clock.advance(30)
            _ = try await resolver.resolve(resolver.hints[0], with: .code(server.totpCode(secret)))

            // The first client's second factor is older than five minutes: step up first.
            server.clock.advance(301)
            #expect(
                await Self.attempt(client, "correct horse battery", "a brand new passphrase")?.problem?.code
                    == .secondFactorRequired)
            server.clock.advance(30)
            _ = try await client.stepUp(FactorHint(totp), with: .code(server.totpCode(secret)))
            #expect(
                await Self.attempt(client, "not my password", "a brand new passphrase")?.problem?.invalidFields.map(
                    \.name) == ["current_password"])
            #expect(
                await Self.attempt(client, "correct horse battery", "password")?.problem?.invalidFields.map(\.name) == [
                    "new_password"
                ])
            #expect(await Self.attempt(client, "correct horse battery", "a brand new passphrase") == nil)

            #expect(try await client.currentSession().user.email == "change@example.com")  // this session lives on
            #expect(await refusal { try await other.currentSession() }?.problem?.status == 401)  // the other one ended
            #expect(
                await refusal {
                    try await other.signIn(email: "change@example.com", password: "correct horse battery")
                }?.problem?.code
                    == .invalidCredentials)
            guard
                case .secondFactorRequired = try await other.signIn(
                    email: "change@example.com", password: "a brand new passphrase")
            else {
                Issue.record("the new password works, with the second factor")
                return
            }
            #expect(try server.lastMessage(to: "change@example.com")?.contains("password was changed") == true)
            #expect(try server.auditKinds().contains("password.changed"))
        }
    }
}

@Suite("The language of a user's messages")
struct MessageLanguageTests {
    static func setting(_ client: TrifactorClient, _ locale: String?) async -> Result<UserInfo, TrifactorError> {
        do { return .success(try await client.setLanguage(locale)) } catch { return .failure(error) }
    }

    @Test(
        "sign-up in Spanish mails the code in Spanish; a user who chooses German gets German; an unknown language is an invalid field"
    )
    func language() async throws {
        try await Backend.all[0].withLiveServer { server in
            let spanish = server.sdk(profile: "es")
            try await spanish.signUp(email: "lucia@example.com", password: "correct horse battery", locale: "es-ES")
            #expect(try server.lastMessage(to: "lucia@example.com")?.contains("Su código de verificación") == true)
            #expect(
                await refusal {
                    try await spanish.signUp(email: "x@example.com", password: "correct horse battery", locale: "tlh")
                }?
                .problem?.invalidFields.map(\.name) == ["locale"])

            let client = try await server.sdkUser("jonas@example.com")
            let updated = try await Self.setting(client, "de-DE").get()
            #expect(updated.locale == "de-de")
            #expect(try await client.currentSession().user.locale == "de-de")
            if case .failure(let error) = await Self.setting(client, "xx-YY") {
                #expect(error.problem?.invalidFields.map(\.name) == ["locale"])
            } else {
                Issue.record("a language without messages is refused")
            }
            try await client.changePassword(current: "correct horse battery", new: "ein ganz neues Passwort")
            #expect(
                try server.lastMessage(to: "jonas@example.com")?.contains("Ihr Passwort für Trifactor wurde geändert")
                    == true)
            #expect(try await Self.setting(client, nil).get().locale == nil)
        }
    }
}
