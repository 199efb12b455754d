import Foundation
import ServerTestSupport
import Synchronization
import Testing
import TrifactorKit
import TrifactorKitTesting
import TrifactorServer
import TrifactorTestSupport

/// Real HTTP to trifactord whose answers are lost on the way back, as when
/// a connection breaks or a proxy loses its upstream after the server has
/// acted: the first `losing` requests that carry an `Idempotency-Key` reach
/// the server, then fail with a timeout (or a proxy's 502) instead of their answer.
final class LostAnswers: HTTPTransport {
    private let real = URLSessionTransport()
    private let state: Mutex<(losing: Int, keys: [String])>
    private let badGateway: Bool

    init(losing: Int, badGateway: Bool = false) {
        state = Mutex((losing, []))
        self.badGateway = badGateway
    }

    /// The `Idempotency-Key` of every request that had one, in order.
    var keys: [String] { state.withLock { $0.keys } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let response = try await real.send(request)
        guard let key = request.headers["Idempotency-Key"] else { return response }
        let lose = state.withLock { state in
            state.keys.append(key)
            guard state.losing > 0 else { return false }
            state.losing -= 1
            return true
        }
        if lose, badGateway {
            return HTTPResponse(
                status: 502, headers: ["Content-Type": "text/html"], body: Data("<h1>502 Bad Gateway</h1>".utf8))
        }
        if lose { throw TransportFailure(.timedOut, host: request.url.host ?? "") }
        return response
    }
}

@Suite("TrifactorKit repeats a request whose answer was lost, and the server acts once")
struct SDKRetryTests {
    @Test(
        "a verification start whose answer is lost twice is sent again with its key: one text, the first request's id",
        arguments: Backend.all)
    func lostStart(backend: Backend) async throws {
        try await backend.withLiveServer { server in
            let api = try VerifyClient(server)
            let url = URL(string: "http://127.0.0.1:\(server.port)")!
            let lossy = LostAnswers(losing: 2)
            let client = PhoneVerificationClient(
                server: url, apiKey: api.apiKey, apiSecret: api.secret, transport: lossy)
            let id = try await client.start(to: "+447400123470", channels: [.sms], brand: "Acme")
            #expect(lossy.keys.count == 3)
            #expect(Set(lossy.keys).count == 1)
            let texts = try server.outbox(to: "447400123470").filter { $0.channel == "sms" }
            #expect(texts.count == 1)
            let code = try #require(texts.first?.text.firstMatch(of: /\d{4,}/).map { String($0.output) })
            #expect(try await client.check(id, code: code) == .verified)

            // Lost every time: the caller hears the timeout, and still one text went out.
            let hopeless = LostAnswers(losing: 10)
            let gone = PhoneVerificationClient(
                server: url, apiKey: api.apiKey, apiSecret: api.secret, transport: hopeless)
            let failure = await refusal { try await gone.start(to: "+447400123471", channels: [.sms], brand: "Acme") }
            #expect(failure == .transport(TransportFailure(.timedOut, host: "127.0.0.1")))
            #expect(hopeless.keys.count == 3)
            #expect(try server.outbox(to: "447400123471").count { $0.channel == "sms" } == 1)
        }
    }

    @Test("a 503 asking for a longer wait than a repeat's is passed on at once, not repeated")
    func longWaitNotRepeated() async throws {
        try await Backend.all[0].withFreshDatabase { database, _ in
            let server = try TestServer(
                database: database, configuration: TestServer.configuration { $0.dev = false }, withSender: false,
                transport: .socket)
            defer { server.runtime.stop(drainTimeout: 5) }
            let api = try VerifyClient(server)
            let recording = RecordingTransport(passingTo: URLSessionTransport())
            let client = PhoneVerificationClient(
                server: URL(string: "http://127.0.0.1:\(server.port)")!, apiKey: api.apiKey, apiSecret: api.secret,
                transport: recording)
            let failure = await refusal { try await client.start(to: "+447400123473", channels: [.sms], brand: "Acme") }
            #expect(failure?.problem?.status == 503)
            #expect((failure?.problem?.retryAfter ?? 0) > Double(2))
            #expect(recording.requests.count == 1)
        }
    }

    @Test(
        "a second step's text answered by a proxy's 502 is not sent again when the client repeats it",
        arguments: Backend.all)
    func lostChallenge(backend: Backend) async throws {
        try await backend.withLiveServer { server in
            let user = try MFAClient(server, email: "lossy@example.com")
            let phone = try user.enrollPhone("+447400123472")
            let before = try server.outbox(to: "447400123472").count
            let lossy = LostAnswers(losing: 1, badGateway: true)
            let client = TrifactorClient(
                server: URL(string: "http://127.0.0.1:\(server.port)")!, transport: lossy, secrets: MemorySecretStore())
            guard
                case .secondFactorRequired(let resolver) = try await client.signIn(
                    email: user.email, password: user.password)
            else {
                Issue.record("expected a second step")
                return
            }
            let hint = try #require(resolver.hints.first { $0.id == phone })
            _ = try await resolver.challenge(hint)
            #expect(lossy.keys.count == 2)
            #expect(try server.outbox(to: "447400123472").count == before + 1)
            let code = try #require(try user.lastSMSCode("447400123472"))
            let session = try await resolver.resolve(hint, with: .code(code))
            #expect(session.methods == ["pwd", "sms"])
        }
    }
}
