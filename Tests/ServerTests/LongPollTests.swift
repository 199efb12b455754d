import API
import Foundation
import Glibc
import HTTP
import ServerTestSupport
import Store
import Synchronization
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

/// Long polls hold no thread, cost nothing while nothing changes, and wake
/// when what they wait for changes, on this instance or another one.
@Suite("Long polls")
struct LongPollTests {
    /// Threads of this process.
    static func threads() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1
    }

    @Test(
        "1,000 waiting device polls take no thread each and no CPU while nothing changes; sign-ins still work, and one change answers them all"
    )
    func thousandWaiters() throws {
        let configuration = TestServer.configuration {
            $0.http.connectionsPerIP = 0
            $0.http.connectionLimit = 4096
        }
        try Backend.all[0].withServer(configuration) { server in
            let s = try PushApprovalTests.setup(server, email: "many@example.com")
            let headers = try PushApprovalTests.deviceHeaders(s)
            let threadsBefore = Self.threads()
            var pollers: [HTTPTestClient] = []
            for _ in 0..<1000 {
                let client = try HTTPTestClient(port: server.port, timeout: 30)
                try client.send(
                    HTTPTestClient.head(
                        "GET", "/v1/devices/\(s.deviceID)/approvals?wait=25", headers: headers, contentLength: nil))
                pollers.append(client)
            }
            #expect(try eventually(10) { server.services.hub.waiting == 1000 })
            // Other suites run in parallel and start threads of their own (the SDK's URLSession, executors of
            // other test servers: once 149 of them in the same seconds); a thread per poll would be 1,000.
            #expect(Self.threads() - threadsBefore < 400, "threads grew from \(threadsBefore) to \(Self.threads())")

            // Nothing changes for 2 s: no handler runs again (before, every waiter re-ran every second).
            let rerunsBefore = server.services.hub.reruns
            sleep(2)
            #expect(server.services.hub.reruns == rerunsBefore)

            let signIn = try s.user.passwordSignIn()
            #expect(signIn.status == 200)
            let pending = try signIn.decode(MFARequired.self).pendingCredential
            let challenge = try server.json(
                "POST", "/v1/mfa/sign-in/challenges", ["pending_credential": pending, "enrollment_id": s.deviceID])
            #expect(challenge.status == 202)
            var answered = 0
            for client in pollers {
                let response = try client.readResponse()
                if (try? response.decode(PendingApprovals.self))?.approvals.count == 1 { answered += 1 }
            }
            #expect(answered == 1000)
        }
    }

    @Test(
        "a device polling one instance hears at once of a sign-in made on another instance of the same PostgreSQL",
        .enabled(if: Backend.postgresURL != nil))
    func acrossInstances() throws {
        let backend = try #require(Backend.all.first { $0.dialect == .postgres })
        try backend.withTwoInstances { first, second in
            let s = try PushApprovalTests.setup(first, email: "two@example.com")
            let headers = try PushApprovalTests.deviceHeaders(s)
            let poller = try HTTPTestClient(port: first.port, timeout: 30)
            try poller.send(
                HTTPTestClient.head(
                    "GET", "/v1/devices/\(s.deviceID)/approvals?wait=20", headers: headers, contentLength: nil))
            #expect(try eventually(5) { first.services.hub.waiting == 1 })

            let signIn = try HTTPTestClient(port: second.port).json(
                "POST", "/v1/sessions", ["email": s.user.email, "password": s.user.password])
            let pending = try signIn.decode(MFARequired.self).pendingCredential
            let started = ContinuousClock.now
            let challenge = try HTTPTestClient(port: second.port).json(
                "POST", "/v1/mfa/sign-in/challenges",
                ["pending_credential": pending, "enrollment_id": s.deviceID])
            #expect(challenge.status == 202)
            let response = try poller.readResponse()
            #expect((try? response.decode(PendingApprovals.self))?.approvals.count == 1)
            #expect(ContinuousClock.now - started < .seconds(3))
        }
    }
}
