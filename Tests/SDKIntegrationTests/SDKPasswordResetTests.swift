import Foundation
import ServerTestSupport
import Testing
import TrifactorKit
import TrifactorKitTesting
import TrifactorTestSupport

@Suite("TrifactorKit against trifactord: a forgotten password")
struct SDKPasswordResetTests {
    @Test(
        "the emailed code, the authenticator app, the new password: the old session ends and the new password signs in",
        arguments: Backend.all)
    func withTOTP(backend: Backend) async throws {
        try await backend.withLiveServer { server in
            let client = try await server.sdkUser("kit-reset@example.com")
            let (factor, secret) = try await server.sdkEnrollTOTP(client)
            let stranger = server.sdk(profile: "stranger")
            try await stranger.requestPasswordReset(email: "kit-reset@example.com")
            server.tick()
            let message = try #require(
                try server.outbox(to: "kit-reset@example.com").first { $0.text.contains("reset code") })
            let code = String(
                message.text[try #require(message.text.range(of: #"(?<!\d)\d{8}(?!\d)"#, options: .regularExpression))])
            let wrong = try #require(
                await refusal {
                    try await stranger.verifyPasswordReset(email: "kit-reset@example.com", code: "12345678")
                })
            #expect(wrong.problem?.code == .invalidCode)
            let reset = try await stranger.verifyPasswordReset(email: "kit-reset@example.com", code: code)
            #expect(reset.secondFactorRequired && reset.hints.map(\.id) == [factor.enrollmentID])
            let hint = reset.hints[0]
            guard case .enterCode = try await reset.challenge(hint) else {
                Issue.record("TOTP sends nothing")
                return
            }
            let missing = try #require(
                await refusal { try await reset.complete(newPassword: "a brand new passphrase") })
            #expect(missing.problem?.code == .secondFactorRequired)
            server.clock.advance(30)
            try await reset.complete(
                newPassword: "a brand new passphrase", proving: hint, with: .code(server.totpCode(secret)))
            let ended = try #require(await refusal { try await client.currentSession() })
            #expect(ended.problem?.code == .unauthenticated)
            guard
                case .secondFactorRequired = try await stranger.signIn(
                    email: "kit-reset@example.com", password: "a brand new passphrase")
            else {
                Issue.record("the new password leads to the second step")
                return
            }
            let spent = try #require(await refusal { try await reset.complete(newPassword: "yet another passphrase") })
            #expect(spent.problem?.code == .invalidResetCredential)
        }
    }
}
