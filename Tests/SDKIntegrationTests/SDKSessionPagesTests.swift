import ServerTestSupport
import Testing
import TrifactorKit
import TrifactorServer
import TrifactorTestSupport

@Suite("TrifactorKit lists every page of sessions")
struct SDKSessionPagesTests {
    @Test("sessions() follows the pages: 120 live sessions, listed in pages of 100, come back once each")
    func everyPage() async throws {
        try await Backend.all[0].withLiveServer(TestServer.configuration { $0.maxSessionsPerUser = 500 }) { server in
            let client = server.sdk()
            _ = try server.signUp("pages-sdk@example.com")
            for _ in 0..<118 {
                _ = try server.json(
                    "POST", "/v1/sessions", ["email": "pages-sdk@example.com", "password": "correct horse battery"])
            }
            guard
                case .signedIn = try await client.signIn(
                    email: "pages-sdk@example.com", password: "correct horse battery")
            else {
                Issue.record("expected a session")
                return
            }
            let all = try await client.sessions()
            #expect(all.count == 120)
            #expect(Set(all.map(\.id)).count == 120)
            #expect(all.filter(\.current).count == 1)
        }
    }
}
