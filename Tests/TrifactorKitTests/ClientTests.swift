import Foundation
import Testing
import TrifactorKit
import TrifactorKitTesting

/// The client against a canned server (RecordingTransport): what it sends,
/// what it keeps, what it prints.
@Suite("TrifactorKit client behaviour")
struct ClientTests {
    static let server = URL(string: "https://auth.example.com")!

    @Test("signing out without a network forgets the token anyway, and says the server was not reached")
    func signOutOffline() async throws {
        let secrets = ScriptedSecretStore()
        try await secrets.set(
            Data("tok".utf8), for: "default.session-token", protection: .afterFirstUnlockThisDeviceOnly)
        let offline = RecordingTransport { _ in throw TransportFailure(.unreachable, host: "auth.example.com") }
        let client = TrifactorClient(server: Self.server, transport: offline, secrets: secrets)
        #expect(try await client.hasSession())
        do {
            try await client.signOut()
            Issue.record("the failure to reach the server must be reported")
        } catch {
            #expect(error == .transport(TransportFailure(.unreachable, host: "auth.example.com")))
        }
        #expect(try await !client.hasSession())
        #expect(offline.requests.map(\.method) == ["DELETE"])
        #expect(offline.requests.first?.headers["Authorization"] == "Bearer tok")
    }

    @Test("Retry-After is read as seconds or as an HTTP date; a problem without a body is still a 401")
    func retryAfter() async throws {
        let date = DateFormatter()
        date.locale = Locale(identifier: "en_US_POSIX")
        date.timeZone = TimeZone(identifier: "GMT")
        date.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        let later = date.string(from: Date().addingTimeInterval(120))
        let problem = Data(
            #"{"type":"t","title":"t","status":429,"detail":"Slow down.","code":"rate_limited","request_id":"r-1"}"#
                .utf8)
        for (header, low, high) in [("7", 7.0, 7.0), (later, 100.0, 121.0)] {
            let canned = RecordingTransport { _ in
                HTTPResponse(
                    status: 429, headers: ["Content-Type": "application/problem+json", "Retry-After": header],
                    body: problem)
            }
            let client = TrifactorClient(server: Self.server, transport: canned, secrets: ScriptedSecretStore())
            do {
                _ = try await client.signIn(email: "a@example.com", password: "correct horse battery")
                Issue.record("expected 429")
            } catch {
                let wait = try #require(error.problem?.retryAfter)
                #expect(wait >= low && wait <= high, "Retry-After \(header) read as \(wait)")
                #expect(error.problem?.code == .rateLimited)
                #expect(error.problem?.requestID == "r-1")
            }
        }
        let bare = RecordingTransport { _ in HTTPResponse(status: 401, headers: ["X-Request-ID": "r-2"], body: Data()) }
        let verify = PhoneVerificationClient(
            server: Self.server, apiKey: "key", apiSecret: "s3cr3t-value", transport: bare)
        do {
            try await verify.next("id")
            Issue.record("expected 401")
        } catch {
            #expect(error.problem?.status == 401)
            #expect(error.problem?.requestID == "r-2")
        }
    }

    @Test("values holding secrets print and dump without them")
    func redaction() {
        let verify = PhoneVerificationClient(
            server: Self.server, apiKey: "key", apiSecret: "s3cr3t-value",
            transport: RecordingTransport { _ in
                HTTPResponse(status: 200, headers: [:], body: Data())
            })
        var dumped = ""
        dump(verify, to: &dumped)
        #expect(!dumped.contains("s3cr3t") && !"\(verify)".contains("s3cr3t"))
        #expect(!dumped.contains(Data("key:s3cr3t-value".utf8).base64EncodedString()))
        let request = HTTPRequest(
            method: "GET", url: Self.server.appendingPathComponent("v1/session"),
            headers: ["Authorization": "Bearer tok-123", "X-Trifactor-Pending-Credential": "pending-456"])
        var shown = ""
        dump(request, to: &shown)
        #expect(!shown.contains("tok-123") && !shown.contains("pending-456"))
        #expect("\(request)" == "GET /v1/session")
    }

    @Test("a cancelled prompt on a gated item is an error, never a missing item; an ungated read never prompts")
    func cancelledIsNotMissing() async throws {
        let secrets = ScriptedSecretStore()
        try await secrets.set(Data("x".utf8), for: "gated", protection: .biometryCurrentSet)
        try await secrets.set(Data("y".utf8), for: "plain", protection: .afterFirstUnlockThisDeviceOnly)
        secrets.enqueue(.presence(.userCancel))
        await #expect(throws: SecretStoreError.presence(.userCancel)) {
            _ = try await secrets.get("gated", prompt: "Show")
        }
        #expect(try await secrets.get("gated", prompt: "Show") == Data("x".utf8))
        #expect(try await secrets.get("plain", prompt: nil) == Data("y".utf8))
        #expect(try await secrets.get("missing", prompt: nil) == nil)
        #expect(secrets.prompts == ["Show", "Show"])
    }
}
