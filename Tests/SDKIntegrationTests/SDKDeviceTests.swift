import Core
import Foundation
import ServerTestSupport
import Testing
import TrifactorKit
import TrifactorKitTesting
import TrifactorKitVault
import TrifactorTestSupport

@Suite("TrifactorKit against trifactord: the device, step-up, bound actions, phone verification")
struct SDKDeviceTests {
    /// A user with an authenticator app, stepped up (so they may add a device), and its secret.
    static func steppedUpUser(_ server: TestServer, _ email: String) async throws -> (TrifactorClient, secret: String) {
        let client = try await server.sdkUser(email)
        let (totp, secret) = try await server.sdkEnrollTOTP(client)
        server.clock.advance(30)
        _ = try await client.stepUp(FactorHint(totp), with: .code(server.totpCode(secret)))
        return (client, secret)
    }

    /// A password sign-in by `client` that asks for the device's approval: its resolver, the device's hint and the push.
    static func pushedSignIn(_ client: TrifactorClient, _ email: String) async throws -> (
        SecondFactorResolver, FactorHint, PushApproval
    ) {
        let result = try await client.signIn(email: email, password: "correct horse battery")
        guard case .secondFactorRequired(let resolver) = result,
            let hint = resolver.hints.first(where: { $0.kind == .device }),
            case .push(let push) = try await resolver.challenge(hint)
        else { throw PushExpected() }
        return (resolver, hint, push)
    }

    /// A sign-in that asked for no push.
    struct PushExpected: Error {}

    /// A user with an authenticator app, stepped up, with this device enrolled.
    static func userWithDevice(_ server: TestServer, _ email: String) async throws -> (
        TrifactorClient, TestDevice, secret: String
    ) {
        let (client, secret) = try await steppedUpUser(server, email)
        let device = TestDevice(server)
        let factor = try await device.authenticator.enroll(with: client, name: "Linux laptop")
        #expect(factor.kind == "device")
        #expect(try await device.authenticator.factorID() == factor.enrollmentID)
        return (client, device, secret)
    }

    @Test(
        "the device authenticator approves a sign-in started by another client after the user picks the shown number",
        arguments: Backend.all)
    func pushApproval(backend: Backend) async throws {
        try await backend.withLiveServer { server in
            let (_, device, _) = try await Self.userWithDevice(server, "push@example.com")
            let browser = server.sdk(profile: "browser")
            guard
                case .secondFactorRequired(let resolver) = try await browser.signIn(
                    email: "push@example.com", password: "correct horse battery")
            else {
                Issue.record("expected a resolver")
                return
            }
            let hint = try #require(resolver.hints.first { $0.kind == .device })
            guard case .push(let push) = try await resolver.challenge(hint) else {
                Issue.record("a device challenge is a push")
                return
            }
            // The browser waits while the device answers.
            async let signedIn = resolver.resolve(hint, with: .approval(push))
            let approvals = try await device.authenticator.pendingApprovals(wait: 5)
            let approval = try #require(approvals.first)
            #expect(approval.choices.contains(push.number))
            #expect(approval.choices.count == 3)
            let promptsBefore = device.typed.prompts.count
            #expect(try await device.authenticator.answer(approval, pickedNumber: push.number) == .approved)
            // One prompt for the approval, from the key itself (the vault, unlocked since enrolling, does not release it);
            // none for the polls before it, and UserPresence is never the one asked.
            #expect(device.typed.prompts.count == promptsBefore + 1)
            #expect(device.typed.prompts.last == "Approve the sign-in (vault passphrase): ")
            #expect(device.presence.prompts == 0)
            let session = try await signedIn
            #expect(session.aal == 2)
            #expect(session.methods == ["pwd", "swk", "pin"])
            #expect(try await browser.sessions().contains { $0.current && $0.deviceID == hint.id })
        }
    }

    @Test("a wrong number denies and ends that sign-in; the waiting client hears it as denied", arguments: Backend.all)
    func wrongNumber(backend: Backend) async throws {
        try await backend.withLiveServer { server in
            let (_, device, _) = try await Self.userWithDevice(server, "fatigue@example.com")
            let recording = RecordingTransport(passingTo: URLSessionTransport())
            let attacker = server.sdk(profile: "attacker", transport: recording)
            let (resolver, hint, push) = try await Self.pushedSignIn(attacker, "fatigue@example.com")
            let approval = try #require(try await device.authenticator.pendingApprovals().first)
            let wrong = try #require(approval.choices.first { $0 != push.number })
            #expect(try await device.authenticator.answer(approval, pickedNumber: wrong) == .denied)
            #expect(try await push.state() == .denied)
            // The poll carries the pending credential in a header: a reverse proxy's access log never sees it.
            let polls = recording.requests.filter { $0.url.path.contains("/v1/mfa/sign-in/approvals/") }
            #expect(!polls.isEmpty && polls.allSatisfy { $0.url.query?.contains("pending_credential") != true })
            #expect(polls.allSatisfy { $0.headers["X-Trifactor-Pending-Credential"]?.count == 43 })
            #expect(await refusal { try await resolver.resolve(hint, with: .approval(push)) } == .approvalDenied)
            #expect(try await !attacker.hasSession())
            #expect(try server.auditKinds().contains("push.wrong_number"))
        }
    }

    @Test(
        "the device's signature steps the session up and approves a bound transfer; the summary states the action",
        arguments: Backend.all)
    func stepUpAndBoundAction(backend: Backend) async throws {
        try await backend.withLiveServer { server in
            let (client, device, secret) = try await Self.userWithDevice(server, "bank@example.com")
            let factors = try await client.factors()
            let deviceHint = FactorHint(try #require(factors.first { $0.kind == "device" }))
            guard case .deviceChallenge(let challenge) = try await client.stepUpChallenge(deviceHint) else {
                Issue.record("a device step-up gets a challenge to sign")
                return
            }
            let signature = try await device.authenticator.signature(
                purpose: "stepup", challenge: challenge, reason: "Confirm it is you")
            #expect(
                try await client.stepUp(deviceHint, with: .deviceSignature(signature)).session.methods.contains("swk"),
                "the Linux vault's key is a software key")

            let transfer = BoundAction.transfer(
                amount: "250.00", currency: "EUR", payee: "Alice Example", from: "checking")
            let pending = try await client.authorize(transfer, with: deviceHint)
            #expect(pending.summary.contains("250.00"))
            #expect(pending.summary.contains("Alice Example"))
            guard case .deviceChallenge(let authzChallenge) = pending.challenge else {
                Issue.record("a device authorization has a challenge")
                return
            }
            let authzSignature = try await device.authenticator.signature(
                purpose: "authz", challenge: authzChallenge, action: pending.actionHash,
                reason: "Confirm the transfer")
            try await pending.approve(with: .deviceSignature(authzSignature))
            #expect(
                await refusal { try await pending.approve(with: .deviceSignature(authzSignature)) }?.problem?.status
                    == 404)
            // The relying party spends it for exactly that action, once.
            try await client.consumeAuthorization(pending.id, for: transfer)
            #expect(
                await refusal { try await client.consumeAuthorization(pending.id, for: transfer) }?.problem?.status
                    == 404)

            // With the authenticator app: a wrong code is refused, the right one approves.
            let totpHint = FactorHint(try #require(factors.first { $0.kind == "totp" }))
            let second = try await client.authorize(transfer, with: totpHint)
            #expect(await refusal { try await second.approve(with: .code("000000")) }?.problem?.code == .invalidCode)
            server.clock.advance(30)
            try await second.approve(with: .code(server.totpCode(secret)))
            // A changed amount voids it: not even the approved action can spend it afterwards.
            let changed = BoundAction.transfer(
                amount: "2500.00", currency: "EUR", payee: "Alice Example", from: "checking")
            #expect(
                await refusal { try await client.consumeAuthorization(second.id, for: changed) }?.problem?.code
                    == "authorization_mismatch")
            #expect(
                await refusal { try await client.consumeAuthorization(second.id, for: transfer) }?.problem?.status
                    == 404)
        }
    }

    @Test(
        "phone verification: several at once, a wrong code, then the right one from a new client value (an app restart)",
        arguments: Backend.all)
    func phoneVerification(backend: Backend) async throws {
        try await backend.withLiveServer { server in
            let api = try VerifyClient(server)
            let url = URL(string: "http://127.0.0.1:\(server.port)")!
            let first = PhoneVerificationClient(server: url, apiKey: api.apiKey, apiSecret: api.secret)
            let a = try await first.start(to: "+447400123456", brand: "Acme")
            let b = try await first.start(to: "447400123457", channels: [.voice, .sms], brand: "Acme", codeLength: 6)
            #expect(a != b)
            let conflict = await refusal { try await first.start(to: "447400123456", brand: "Acme") }
            #expect(conflict?.problem?.status == 409)
            #expect(conflict?.problem?.requestID == a)
            #expect(try await first.check(a, code: "0000") == .wrongCode(attemptsLeft: 2))
            #expect(try await first.check(a, code: "0001") == .wrongCode(attemptsLeft: 1))

            let restarted = PhoneVerificationClient(server: url, apiKey: api.apiKey, apiSecret: api.secret)
            let code = try #require(
                try server.outbox(to: "447400123456").first?.text.firstMatch(of: /\d{4}/).map { String($0.output) })
            #expect(try await restarted.check(a, code: code) == .verified)
            #expect(try await restarted.check(a, code: code) == .ended)
            try await restarted.next(b)
            #expect(await refusal { try await restarted.next(b) }?.problem?.status == 409)
            let c = try await restarted.start(to: "447400123458", brand: "Acme")
            #expect(await refusal { try await restarted.cancel(c) }?.problem?.status == 409)  // not in the first 30 s
            server.clock.advance(31)
            try await restarted.cancel(c)
            #expect(try await restarted.check(c, code: "1234") == .ended)
            let wrongKey = PhoneVerificationClient(server: url, apiKey: api.apiKey, apiSecret: "not the secret")
            #expect(await refusal { try await wrongKey.check(b, code: "1234") }?.problem?.status == 401)
        }
    }

    @Test("a device whose clock is 10 minutes slow is refused once, reads the server's Date, and polls again at once")
    func clockSkew() async throws {
        try await Backend.all[0].withLiveServer { server in
            let (_, device, _) = try await Self.userWithDevice(server, "skew@example.com")
            let slowClock = SlowClock(server: server.clock, behind: 600)
            let slow = DeviceAuthenticator(
                server: URL(string: "http://127.0.0.1:\(server.port)")!,
                keys: SoftwareDeviceKeyStore(vault: device.vault),
                secrets: VaultSecretStore(vault: device.vault), presence: device.presence, clock: slowClock)
            #expect(slow.clockSkew == 0)
            #expect(try await slow.pendingApprovals().isEmpty)
            #expect(slow.clockSkew == 600)
            let polls = try server.log.all.filter { $0.contains("/approvals") && $0.contains("\"event\":\"request\"") }
            #expect(polls.map { $0.contains("\"status\":401") } == [true, false])
        }
    }

    @Test("a cancelled key prompt while approving is the presence error, and nothing is sent for it")
    func cancelledPrompt() async throws {
        try await Backend.all[0].withLiveServer { server in
            let (_, device, _) = try await Self.userWithDevice(server, "cancel@example.com")
            let browser = server.sdk(profile: "browser")
            let (_, _, push) = try await Self.pushedSignIn(browser, "cancel@example.com")
            let approval = try #require(try await device.authenticator.pendingApprovals().first)
            device.typed.enqueue(.cancel)
            #expect(
                await refusal { try await device.authenticator.answer(approval, pickedNumber: push.number) }
                    == .presence(.userCancel))
            #expect(try await push.state() == .pending)
            // A typo releases nothing either, though this process has the vault open: the approval key has a seal of its own.
            device.typed.enqueue(.wrong)
            #expect(
                await refusal { try await device.authenticator.answer(approval, pickedNumber: push.number) }
                    == .presence(.failed))
            #expect(try await push.state() == .pending)
            // Denying asks nothing.
            let before = device.typed.prompts.count
            #expect(try await device.authenticator.answer(approval, pickedNumber: nil) == .denied)
            #expect(device.typed.prompts.count == before)
        }
    }

    @Test(
        "enrolling makes a second key released by the passphrase: the factor is approval-bound, and forgetting deletes both keys"
    )
    func approvalKey() async throws {
        try await Backend.all[0].withLiveServer { server in
            let (client, device, _) = try await Self.userWithDevice(server, "twokeys@example.com")
            let factor = try #require(try await client.factors().first { $0.kind == "device" })
            #expect(factor.approvalBound == true && factor.approvalGate == "passphrase")
            #expect(try await device.authenticator.isApprovalBound())
            #expect(try device.vault.names().contains("device.approval.gated-key"))
            #expect(!(try device.vault.names().contains("device.approval.private-key")))
            // Enrolling asked for the vault's new passphrase (twice) and once to guard the key, then once for its check.
            #expect(device.typed.prompts.contains("Add this device to your account (vault passphrase): "))
            try await device.authenticator.forget()
            #expect(try device.vault.names().filter { $0.hasPrefix("device") }.isEmpty)
            #expect(try await !device.authenticator.isApprovalBound())
        }
    }

    @Test(
        "two enrollments of one device at once: one enrolls, the other is refused, and the device's approvals still work"
    )
    func concurrentEnroll() async throws {
        try await Backend.all[0].withLiveServer { server in
            let (client, _) = try await Self.steppedUpUser(server, "doubletap@example.com")
            let device = TestDevice(server)
            async let first = refusal { try await device.authenticator.enroll(with: client, name: "Laptop") }
            async let second = refusal { try await device.authenticator.enroll(with: client, name: "Laptop") }
            let refusals = await [first, second]
            #expect(refusals.filter { $0 == nil }.count == 1, "one enrolls")
            #expect(refusals.compactMap { $0?.problem?.code } == [.secondFactorExists], "the other is refused")
            // The approval key the server knows is the one the device holds: a step-up signed by it passes.
            let hint = FactorHint(try #require(try await client.factors().first { $0.kind == .device }))
            guard case .deviceChallenge(let challenge) = try await client.stepUpChallenge(hint) else {
                Issue.record("a device step-up gets a challenge to sign")
                return
            }
            let signature = try await device.authenticator.signature(
                purpose: "stepup", challenge: challenge, reason: "Confirm")
            #expect(try await client.stepUp(hint, with: .deviceSignature(signature)).session.aal == 2)
        }
    }

    @Test(
        "an approval key left by an enrollment that never finished is not reused: enrolling makes it anew, under the policy it claims"
    )
    func leftoverApprovalKey() async throws {
        try await Backend.all[0].withLiveServer { server in
            let (client, _) = try await Self.steppedUpUser(server, "leftover@example.com")
            let device = TestDevice(server)
            // What an enrollment abandoned at its check (under another policy, perhaps) leaves behind.
            let keys = SoftwareDeviceKeyStore(vault: device.vault)
            let leftover = try await keys.createKey(tag: "device.approval", releasedBy: .biometricsOrPasscode)
            _ = try await device.authenticator.enroll(with: client, name: "Linux laptop")
            let enrolled = try #require(try await keys.publicKey(tag: "device.approval"))
            #expect(enrolled != leftover)
            #expect(try await device.authenticator.isApprovalBound())
        }
    }
}

/// A device clock that runs `behind` seconds slow against the server's.
struct SlowClock: TrifactorClock {
    let server: TestClock
    let behind: TimeInterval
    var now: Date { server.clock.now().addingTimeInterval(-behind) }
}
