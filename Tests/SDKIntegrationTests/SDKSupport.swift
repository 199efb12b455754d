import Core
import Crypto
import Foundation
import ServerTestSupport
import Testing
import TrifactorKit
import TrifactorKitTesting
import TrifactorKitVault
import TrifactorTestSupport

@testable import TrifactorServer

/// The test server's hand-moved clock, as the SDK reads time (TOTP codes
/// and device signatures must agree with the server's clock).
struct ServerClock: TrifactorClock {
    let clock: TestClock
    var now: Date { clock.clock.now() }
}

extension Backend {
    /// Runs `body` with a test server listening on loopback (the SDK speaks real HTTP to it).
    func withLiveServer(
        _ configuration: Configuration = TestServer.configuration(), _ body: (TestServer) async throws -> Void
    ) async throws {
        try await withFreshDatabase { database, _ in
            let server = try TestServer(database: database, configuration: configuration, transport: .socket)
            defer { server.runtime.stop(drainTimeout: 5) }
            try await body(server)
        }
    }
}

extension TestServer {
    /// An SDK client of this server, with its own in-memory secret store.
    func sdk(
        secrets: any SecretStore = MemorySecretStore(), profile: String = "default",
        transport: any HTTPTransport = URLSessionTransport()
    ) -> TrifactorClient {
        TrifactorClient(
            server: URL(string: "http://127.0.0.1:\(port)")!, transport: transport, clock: ServerClock(clock: clock),
            secrets: secrets,
            profile: profile)
    }

    /// The TOTP code of `secret` at the server's time plus `offset` steps.
    func totpCode(_ secret: String, offset: Int = 0) -> String {
        let step = OneTimePassword.step(unixTime: clock.clock.now().timeIntervalSince1970, period: 30)
        return OneTimePassword.hotp(
            secret: Base32.decode(secret) ?? [], counter: UInt64(Int64(step) + Int64(offset)), digits: 6,
            algorithm: .sha1)
    }

    /// Signs up and verifies `email` through the SDK; leaves the client signed in.
    func sdkUser(_ email: String, password: String = "correct horse battery") async throws -> TrifactorClient {
        let client = sdk()
        try await client.signUp(email: email, password: password)
        try await client.verifyEmail(email, code: try #require(try lastCode(to: email)))
        guard case .signedIn = try await client.signIn(email: email, password: password) else {
            throw TrifactorError.unexpectedResponse(status: 0)
        }
        return client
    }

    /// Enrolls an authenticator app through the SDK; returns its factor and secret.
    func sdkEnrollTOTP(_ client: TrifactorClient) async throws -> (factor: EnrolledFactor, secret: String) {
        let pending = try await client.enrollTOTP()
        let secret = try #require(pending.secret)
        return (try await pending.confirm(code: totpCode(secret), name: "Authenticator"), secret)
    }
}

/// The passphrase a person types at the vault's prompts: the right one
/// unless the script says otherwise (a typo, Ctrl-D); records each prompt.
final class TypedPassphrase: @unchecked Sendable {
    // @unchecked Sendable: every access holds `lock`.
    enum Answer { case right, wrong, cancel }
    private let lock = NSLock()
    private var script: [Answer] = []
    private var shown: [String] = []
    static let right = "device passphrase"

    var prompts: [String] { lock.withLock { shown } }

    func enqueue(_ answers: Answer...) { lock.withLock { script += answers } }

    var source: PassphraseSource {
        { prompt, _ throws(LocalAuthenticationError) in
            let answer: Answer = self.lock.withLock {
                self.shown.append(prompt)
                return self.script.isEmpty ? .right : self.script.removeFirst()
            }
            switch answer {
            case .right: return SecureBytes(Array(Self.right.utf8))
            case .wrong: return SecureBytes(Array("not the passphrase".utf8))
            case .cancel: throw .userCancel
            }
        }
    }
}

/// A device of its own: a vault in a temp folder whose passphrase prompts
/// are answered by `typed`, its software keys, and a presence check that
/// counts prompts (asked only for a device enrolled before approval keys).
struct TestDevice {
    let directory: URL
    let vault: Vault
    let typed = TypedPassphrase()
    let presence = ScriptedUserPresence(biometry: .none)
    let authenticator: DeviceAuthenticator

    init(_ server: TestServer) {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)")
        let vault = Vault(
            directory: directory, runtimeDirectory: nil, opsLimit: 1, memLimit: 8 << 20, ask: typed.source)
        self.vault = vault
        authenticator = DeviceAuthenticator(
            server: URL(string: "http://127.0.0.1:\(server.port)")!, keys: SoftwareDeviceKeyStore(vault: vault),
            secrets: VaultSecretStore(vault: vault), presence: presence, clock: ServerClock(clock: server.clock))
    }
}

/// The SDK's error from `body`, or nil when it succeeded (any other error fails the test).
func refusal<T>(_ body: () async throws -> T) async -> TrifactorError? {
    do {
        _ = try await body()
        return nil
    } catch let error as TrifactorError {
        return error
    } catch {
        Issue.record("not a TrifactorError: \(error)")
        return nil
    }
}
