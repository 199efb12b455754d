import API
import Foundation
import Testing
import TrifactorKit

@Suite(
    "Passkeys on Apple platforms: the server's JSON, the platform's failures and the one-shot resume, decided in the core"
)
struct PasskeyCoreTests {
    static let authorization = PasskeyError.authorizationDomain

    static func platform(_ code: Int, _ ceremony: PasskeyCeremony = .registration, reason: String? = nil)
        -> PasskeyError
    {
        PasskeyError.fromPlatform(
            [PlatformError(domain: authorization, code: code)], reason: reason, ceremony: ceremony)
    }

    @Test(
        "a failed request (Associated Domains) keeps the platform's reason for the log and never reads as 'That did not match'"
    )
    func failedIsItsOwnError() {
        let reason = "Application with identifier ABCDE.com.example is not associated with domain bank.example"
        let error = Self.platform(1004, .assertion, reason: reason)
        #expect(error.code == .refused && error.platformReason == reason)
        #expect(error.message != LocalAuthenticationError.failed.message && !error.message.contains("associated"))
        #expect(error.debugDescription.contains(reason) && error.debugDescription.contains("1004"))
        #expect(!error.description.contains(reason))  // shown to users: no entitlements or domains in it
    }

    @Test(
        "each ASAuthorizationError code has its own answer; codes that are not about passkeys are 'unknown'",
        arguments: [
            (1001, PasskeyError.Code.cancelled), (1004, .refused), (1005, .noPasskey), (1006, .alreadyRegistered),
            (1010, .deviceNotConfigured),
            (1000, .unknown), (1002, .unknown), (1003, .unknown), (1009, .unknown), (4242, .unknown),
        ])
    func authorizationCodes(code: Int, expected: PasskeyError.Code) {
        #expect(Self.platform(code).code == expected)
    }

    @Test(
        "an excluded passkey found on this device says it is already on the account, also when WebKit reports it (iOS 17.4–17.x)"
    )
    func alreadyRegistered() {
        let matched = Self.platform(1006)
        #expect(matched.code == .alreadyRegistered && matched.message.contains("already on your account"))
        let webKit = PasskeyError.fromPlatform(
            [PlatformError(domain: PasskeyError.webKitDomain, code: 8)], reason: nil, ceremony: .registration)
        #expect(webKit.code == .alreadyRegistered)
        // The same WebKit code during a sign-in is no such thing.
        #expect(
            PasskeyError.fromPlatform(
                [PlatformError(domain: PasskeyError.webKitDomain, code: 8)], reason: nil, ceremony: .assertion
            ).code == .unknown)
    }

    @Test(
        "the authorization error decides wherever it sits in the chain; a chain without one is unknown, with the chain kept"
    )
    func chain() {
        let wrapped = PasskeyError.fromPlatform(
            [
                PlatformError(domain: "NSCocoaErrorDomain", code: 1),
                PlatformError(domain: Self.authorization, code: 1001),
            ],
            reason: nil, ceremony: .assertion)
        #expect(wrapped.isCancellation)
        let other = PasskeyError.fromPlatform(
            [PlatformError(domain: "NSURLErrorDomain", code: -1009)], reason: "offline", ceremony: .assertion)
        #expect(other.code == .unknown && other.platform == [PlatformError(domain: "NSURLErrorDomain", code: -1009)])
        #expect(!Self.platform(1004).isCancellation)
    }

    @Test("the wire codes are stable", arguments: PasskeyError.Code.allCases)
    func pinnedCodes(code: PasskeyError.Code) {
        let pinned: [PasskeyError.Code: String] = [
            .cancelled: "passkey_cancelled", .alreadyRegistered: "passkey_already_registered",
            .refused: "passkey_refused",
            .noPasskey: "passkey_none_available", .deviceNotConfigured: "passkey_device_not_configured",
            .invalidOptions: "passkey_invalid_options",
            .busy: "passkey_busy", .unexpectedCredential: "passkey_unexpected_credential", .unknown: "passkey_unknown",
        ]
        #expect(code.rawValue == pinned[code])
        #expect(!PasskeyError(code).message.isEmpty)
    }

    @Test(
        "the server's excludeCredentials become the platform's credential ids, in order, repeats dropped, only public-key ones"
    )
    func excludedIDs() throws {
        var options = CreationOptions(
            rpID: "bank.example", rpName: "Bank", userID: "dXNlcg", userName: "a@example.com", displayName: "A",
            challenge: "Y2hhbGxlbmdl",
            exclude: [
                CredentialDescriptor(id: "AQID"), CredentialDescriptor(id: "_-8"),
                CredentialDescriptor(id: "AQID"),
            ])
        var other = CredentialDescriptor(id: "BAUG")
        other.type = "something-else"
        options.excludeCredentials.append(other)
        #expect(try PasskeyJSON.excludedCredentialIDs(options) == [Data([1, 2, 3]), Data([0xFF, 0xEF])])
    }

    @Test(
        "an excluded id that is not base64url, or empty, fails the request rather than being skipped (skipping would allow the duplicate)"
    )
    func badExcludedID() {
        for bad in ["AQ+D", "AQ/D", "not base64", "", "A"] {
            let options = CreationOptions(
                rpID: "r", rpName: "R", userID: "dQ", userName: "u", displayName: "U", challenge: "Yw",
                exclude: [CredentialDescriptor(id: bad)])
            #expect(throws: PasskeyError(.invalidOptions)) { try PasskeyJSON.excludedCredentialIDs(options) }
        }
    }

    @Test("base64url: padded or not, both directions; standard base64's alphabet is refused")
    func base64url() throws {
        #expect(try PasskeyJSON.bytes("_-8") == Data([0xFF, 0xEF]))
        #expect(try PasskeyJSON.bytes("_-8=") == Data([0xFF, 0xEF]))
        #expect(try PasskeyJSON.bytes("") == Data())
        #expect(PasskeyJSON.base64url(Data([0xFF, 0xEF])) == "_-8")
        #expect(throws: PasskeyError(.invalidOptions)) { try PasskeyJSON.bytes("/+8=") }
        #expect(throws: PasskeyError(.invalidOptions)) { try PasskeyJSON.bytes("AQ===") }
        let random = Data((0..<67).map { UInt8(truncatingIfNeeded: $0 &* 37) })
        #expect(try PasskeyJSON.bytes(PasskeyJSON.base64url(random)) == random)
    }

    @Test(
        "the credential's JSON is built from the platform's bytes; a registration without attestation is no credential")
    func credentialJSON() throws {
        let registration = try PasskeyJSON.registration(
            credentialID: Data([1, 2, 3]), clientDataJSON: Data("{}".utf8), attestationObject: Data([0xA0]))
        #expect(
            registration.id == "AQID" && registration.rawId == "AQID" && registration.response.attestationObject == "oA"
        )
        #expect(
            registration.response.clientDataJSON == "e30" && registration.response.transports == ["internal", "hybrid"])
        #expect(throws: PasskeyError(.unexpectedCredential)) {
            try PasskeyJSON.registration(credentialID: Data([1]), clientDataJSON: Data(), attestationObject: nil)
        }
        let assertion = try PasskeyJSON.assertion(
            credentialID: Data([1]), clientDataJSON: Data("{}".utf8), authenticatorData: Data([2]),
            signature: Data([3]), userID: nil)
        #expect(
            assertion.response.authenticatorData == "Ag" && assertion.response.signature == "Aw"
                && assertion.response.userHandle == nil)
        #expect(throws: PasskeyError(.unexpectedCredential)) {
            try PasskeyJSON.assertion(
                credentialID: Data([1]), clientDataJSON: Data(), authenticatorData: nil, signature: Data([3]),
                userID: nil)
        }
    }
}

@Suite("One-shot resume: a continuation is resumed exactly once, whoever answers first")
struct OneShotResumerTests {
    @Test(
        "a second answer (the delegate's 'canceled' after cancel()) is ignored, and the first one is what the caller gets"
    )
    func secondAnswerIgnored() async throws {
        let resumer = OneShotResumer<Int>()
        let value = try await withCheckedThrowingContinuation { continuation in
            #expect(resumer.start(continuation))
            #expect(resumer.resume(returning: 1))
            #expect(!resumer.resume(returning: 2))
            #expect(!resumer.resume(throwing: PasskeyError(.cancelled)))
            #expect(!resumer.cancel())
        }
        #expect(value == 1 && resumer.isAnswered)
    }

    @Test(
        "a task cancelled before its sheet was asked for gets CancellationError, and start says not to show the sheet")
    func cancelBeforeStart() async {
        let shown = Watched(false)
        let task = Task<Int, any Error> {
            while !Task.isCancelled { await Task.yield() }
            let resumer = OneShotResumer<Int>()
            // Already cancelled: onCancel runs first, before the operation.
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    if resumer.start(continuation) { shown.set(true) }
                }
            } onCancel: {
                resumer.cancel()
            }
        }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(!shown.value)
    }

    @Test("a cancellation while the sheet is up answers at once; the platform's late answer changes nothing")
    func cancelWhileWaiting() async {
        let resumer = OneShotResumer<String>()
        let started = Watched(false)
        let task = Task<String, any Error> {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    started.set(resumer.start(continuation))
                }
            } onCancel: {
                resumer.cancel()
            }
        }
        while !started.value { await Task.yield() }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(!resumer.resume(returning: "late credential"))
    }

    @Test("many threads answering at once: exactly one answer is taken, a value or the cancellation")
    func race() async throws {
        var outcomes = (values: 0, cancellations: 0)
        for _ in 0..<50 {
            let resumer = OneShotResumer<Int>()
            do {
                // Even threads answer with their number, odd ones cancel: whichever comes first is the answer.
                let value = try await withCheckedThrowingContinuation { continuation in
                    resumer.start(continuation)
                    let taken = Watched(0)
                    DispatchQueue.concurrentPerform(iterations: 8) { i in
                        if i.isMultiple(of: 2) ? resumer.resume(returning: i) : resumer.cancel() {
                            taken.withLock { $0 += 1 }
                        }
                    }
                    #expect(taken.value == 1)
                }
                #expect(value.isMultiple(of: 2))
                outcomes.values += 1
            } catch is CancellationError {
                outcomes.cancellations += 1
            }
        }
        #expect(outcomes.values + outcomes.cancellations == 50)
    }

    @Test("an answer that comes before start is handed over at start, and a second start is refused, not left hanging")
    func answerBeforeStart() async throws {
        let resumer = OneShotResumer<Int>()
        #expect(resumer.resume(returning: 7))
        let value = try await withCheckedThrowingContinuation { continuation in #expect(!resumer.start(continuation)) }
        #expect(value == 7)
        await #expect(throws: OneShotResumer<Int>.AlreadyStarted()) {
            try await withCheckedThrowingContinuation { continuation in #expect(!resumer.start(continuation)) }
        }
    }
}

/// A value behind a lock, for tests that watch one from several tasks.
final class Watched<Value>: @unchecked Sendable {
    // @unchecked Sendable: every access holds `lock`.
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func set(_ value: Value) { lock.withLock { stored = value } }
    func withLock<T>(_ body: (inout Value) -> T) -> T { lock.withLock { body(&stored) } }
}
