import API
import Core
import Foundation
import HTTP
import Messaging
import ServerTestSupport
import Store
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

/// Webhooks: endpoints through the admin API, messages queued in the event's transaction, delivered in order
/// per endpoint with Standard Webhooks signatures to a receiver on the test server's own socket.
@Suite("Webhooks")
struct WebhooksTests {
    /// What the receiver route got, and what it answers next.
    final class Receiver: @unchecked Sendable {
        // `@unchecked Sendable`: every access holds the lock.
        private let lock = NSLock()
        private var got: [(headers: [String: String], body: [UInt8])] = []
        /// Statuses to answer, in turn; 204 once they are used up.
        private var script: [Int] = []

        func answer(_ request: Request) -> Response {
            lock.withLock {
                got.append((request.headers, request.body))
                return Response(status: script.isEmpty ? 204 : script.removeFirst())
            }
        }
        func fail(_ statuses: [Int]) { lock.withLock { script = statuses } }
        var received: [(headers: [String: String], body: [UInt8])] { lock.withLock { got } }
        /// The `type` of each body received, in order.
        var types: [String] {
            received.map {
                ((try? JSONSerialization.jsonObject(with: Data($0.body))) as? [String: Any])?["type"] as? String ?? ""
            }
        }
    }

    static func server(
        _ backend: Backend, _ receiver: Receiver, tweak: (inout Configuration) -> Void = { _ in },
        _ body: (TestServer) throws -> Void
    ) throws {
        let configuration = TestServer.configuration {
            $0.webhooksAllowPrivate = true
            tweak(&$0)
        }
        try backend.withServer(
            configuration, transport: .socket,
            extraRoutes: { $0.add("POST", "/test/hook", execution: .inline) { receiver.answer($0) } }, body)
    }

    static func writeKey(_ server: TestServer) throws -> String {
        try server.database.transaction {
            try server.services.adminKeys.create(name: "ops", role: .write, on: $0).token
        }
    }

    /// Registers the receiver for `types`; returns its id and secret.
    static func register(_ server: TestServer, key: String, types: [String], personal: Bool = false) throws -> (
        String, String
    ) {
        let answer = try server.json(
            "POST", "/admin/v1/webhooks",
            ["url": "http://127.0.0.1:\(server.port)/test/hook", "event_types": types, "personal_data": personal],
            token: key)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])
        #expect(answer.status == 201, "\(answer.text)")
        return (try #require(object["id"] as? String), try #require(object["secret"] as? String))
    }

    @Test(
        "a write key registers an endpoint whose secret is shown once; private addresses are refused unless allowed",
        arguments: Backend.all)
    func adminAPI(backend: Backend) throws {
        try backend.withServer { server in
            let key = try Self.writeKey(server)
            let read = try server.database.transaction {
                try server.services.adminKeys.create(name: "bob", role: .read, on: $0).token
            }
            let refused = try server.json(
                "POST", "/admin/v1/webhooks", ["url": "https://169.254.169.254/hook", "event_types": ["*"]], token: key)
            #expect(refused.status == 422 && refused.text.contains("url"))
            let unknown = try server.json(
                "POST", "/admin/v1/webhooks", ["url": "https://93.184.216.34/hook", "event_types": ["user.hacked"]],
                token: key)
            #expect(unknown.status == 422 && unknown.text.contains("event_types"))
            #expect(
                try server.json(
                    "POST", "/admin/v1/webhooks", ["url": "https://93.184.216.34/h", "event_types": ["*"]], token: read
                )
                .status == 403)
            let created = try server.json(
                "POST", "/admin/v1/webhooks", ["url": "https://93.184.216.34/hook", "event_types": ["*"]], token: key)
            #expect(created.status == 201)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(created.body)) as? [String: Any])
            let id = try #require(object["id"] as? String)
            let secret = try #require(object["secret"] as? String)
            #expect(secret.hasPrefix("whsec_") && WebhookSignature.key(of: secret)?.count == 24)
            let listed = try server.send("GET", "/admin/v1/webhooks", headers: ["Authorization": "Bearer \(read)"])
            #expect(listed.status == 200 && listed.text.contains(id) && !listed.text.contains(secret))
            let patched = try server.json("PATCH", "/admin/v1/webhooks/\(id)", ["enabled": false], token: key)
            #expect(patched.status == 200 && patched.text.contains("\"disabled\""))
            let rotated = try server.json("POST", "/admin/v1/webhooks/\(id)/rotate-secret", [String: Any](), token: key)
            #expect(rotated.status == 200 && rotated.text.contains("whsec_") && !rotated.text.contains(secret))
            #expect(
                try server.send("DELETE", "/admin/v1/webhooks/\(id)", headers: ["Authorization": "Bearer \(key)"])
                    .status == 204)
            let gone = try server.send("GET", "/admin/v1/webhooks/\(id)", headers: ["Authorization": "Bearer \(key)"])
            #expect(gone.status == 404 && gone.text.contains("not_found"))
            #expect(
                try server.auditKinds().filter { $0.hasPrefix("webhook.") }
                    == ["webhook.created", "webhook.updated", "webhook.secret_rotated", "webhook.deleted"])
        }
    }

    @Test(
        "a sign-up and sign-in reach the receiver in order, signed, without personal data unless asked for",
        arguments: Backend.all)
    func delivered(backend: Backend) throws {
        let receiver = Receiver()
        try Self.server(backend, receiver) { server in
            let key = try Self.writeKey(server)
            let (_, secret) = try Self.register(server, key: key, types: ["user.created", "user.signed_in"])
            try server.signUp("ada@example.com")
            _ = try server.json(
                "POST", "/v1/sessions", ["email": "ada@example.com", "password": "wrong password here"])
            server.tick()
            #expect(receiver.types == ["user.created", "user.signed_in"])
            var ids: Set<String> = []
            for message in receiver.received {
                let id = try #require(message.headers["webhook-id"])
                let timestamp = try #require(message.headers["webhook-timestamp"].flatMap { Int64($0) })
                let expected = WebhookSignature.header(
                    id: id, timestamp: timestamp, body: Data(message.body), secrets: [secret])
                #expect(message.headers["webhook-signature"] == expected)
                ids.insert(id)
                let text = String(decoding: message.body, as: UTF8.self)
                #expect(text.contains("\"user_id\"") && !text.contains("127.0.0.1") && !text.contains("ada@"))
            }
            #expect(ids.count == 2)
        }
    }

    @Test("an event of a rolled-back transaction is never queued", arguments: Backend.all)
    func rolledBack(backend: Backend) throws {
        try backend.withServer(TestServer.configuration { $0.webhooksAllowPrivate = true }) { server in
            let key = try Self.writeKey(server)
            _ = try Self.register(server, key: key, types: ["*"])
            struct Abort: Error {}
            #expect(throws: Abort.self) {
                try server.services.transactions.write { db in
                    try AuditLog.append(
                        AuditEvent(kind: .signInSucceeded, outcome: .success, userID: "usr_x"), at: server.nowMillis,
                        on: db)
                    throw Abort()
                }
            }
            let queued = try server.database.transaction { try $0.query("SELECT seq FROM webhook_deliveries", []) }
            #expect(queued.isEmpty)
        }
    }

    @Test(
        "a receiver answering 503 gets the same message again after a backoff, and the next only after it; one failing past the retry period is disabled and audited",
        arguments: Backend.all)
    func retried(backend: Backend) throws {
        let receiver = Receiver()
        try Self.server(backend, receiver, tweak: { $0.webhooksRetryFor = 60 }) { server in
            let key = try Self.writeKey(server)
            let (id, _) = try Self.register(server, key: key, types: ["user.created", "user.signed_in"])
            receiver.fail([503, 503])
            try server.signUp("bea@example.com")
            server.tick()
            #expect(receiver.types == ["user.created"])
            server.tick()
            #expect(receiver.received.count == 1, "not due yet, and the next waits behind it")
            server.clock.advance(1.1)
            server.tick()
            server.clock.advance(2.1)
            server.tick()
            server.tick()
            #expect(receiver.types == ["user.created", "user.created", "user.created", "user.signed_in"])
            let firstIDs = Set(receiver.received.prefix(3).map { $0.headers["webhook-id"] ?? "" })
            #expect(firstIDs.count == 1)
            // Now failing for longer than the retry period: the endpoint is disabled.
            receiver.fail(Array(repeating: 500, count: 100))
            _ = try server.json(
                "POST", "/v1/sessions", ["email": "bea@example.com", "password": "correct horse battery"])
            for _ in 0..<12 {
                server.tick()
                server.clock.advance(16)
            }
            let endpoint = try server.services.webhooks.find(id)
            #expect(endpoint.status == .disabled)
            #expect(try server.auditKinds().contains("webhook.disabled"))
            // Enabled again, the message that was failing when it was disabled is sent first: the outage lost nothing.
            receiver.fail([])
            let before = receiver.types.count
            _ = try server.json("PATCH", "/admin/v1/webhooks/\(id)", ["enabled": true], token: key)
            server.tick()
            server.tick()
            #expect(Array(receiver.types.dropFirst(before)).first == "user.signed_in")
        }
    }

    @Test(
        "erasing a user takes the personal data out of the undelivered messages about them; user.deleted names them",
        arguments: Backend.all)
    func erased(backend: Backend) throws {
        let receiver = Receiver()
        try Self.server(backend, receiver) { server in
            let key = try Self.writeKey(server)
            _ = try Self.register(server, key: key, types: ["*"], personal: true)
            receiver.fail(Array(repeating: 503, count: 10))
            try server.signUp("eve@example.com")
            server.tick()
            let user = try #require(
                try server.database.transaction {
                    try $0.queryOne("SELECT id FROM users WHERE email = $1", [.text("eve@example.com")])
                })
            let userID = try user.text("id")
            func undelivered() throws -> [String] {
                try server.database.transaction {
                    try $0.query(
                        "SELECT body FROM webhook_deliveries WHERE status IN ('pending', 'sending') ORDER BY seq", []
                    ).map { try $0.text("body") }
                }
            }
            #expect(try undelivered().contains { $0.contains("127.0.0.1") })
            let deleted = try server.send(
                "DELETE", "/admin/v1/users/\(userID)", headers: ["Authorization": "Bearer \(key)"])
            #expect(deleted.status == 200)
            let bodies = try undelivered()
            let aboutThem = bodies.filter { !$0.contains("user.deleted") }
            #expect(!aboutThem.isEmpty && aboutThem.allSatisfy { $0.contains(userID) && !$0.contains("127.0.0.1") })
            #expect(bodies.contains { $0.contains("user.deleted") && $0.contains(userID) })
        }
    }
}

extension WebhooksTests {
    @Test("a sign-in with a second factor is announced once, when it makes its session, not at its password too")
    func twoStepSignInOnce() throws {
        let receiver = Receiver()
        try Self.server(Backend.all[0], receiver) { server in
            let key = try Self.writeKey(server)
            _ = try Self.register(server, key: key, types: ["user.signed_in"])
            let user = try MFAClient(server, email: "two@example.com")
            let factor = try user.enrollTOTP()
            server.tick()
            let before = receiver.types.count
            server.clock.advance(30)
            let pending = try user.passwordSignIn()
            #expect(pending.status == 200, "\(pending.text)")
            server.tick()
            #expect(receiver.types.count == before, "the password alone was announced as a sign-in")
            let step = try pending.decode(MFARequired.self)
            let done = try server.json(
                "POST", "/v1/sessions/mfa",
                [
                    "pending_credential": step.pendingCredential, "enrollment_id": factor.id,
                    "code": user.totp(factor.secret),
                ])
            #expect(done.status == 201, "\(done.text)")
            server.tick()
            #expect(Array(receiver.types.dropFirst(before)) == ["user.signed_in"])
        }
    }
}

extension WebhooksTests {
    @Test(
        "an endpoint refusing every message with a 4xx for the retry period is disabled, not failed message by message")
    func refusingEndpointDisabled() throws {
        let receiver = Receiver()
        try Self.server(Backend.all[0], receiver, tweak: { $0.webhooksRetryFor = 60 }) { server in
            let key = try Self.writeKey(server)
            let (id, _) = try Self.register(server, key: key, types: ["user.created"])
            receiver.fail(Array(repeating: 400, count: 10))
            try server.signUp("first@example.com")
            server.tick()
            #expect(try server.services.webhooks.find(id).status == .enabled, "one refusal is no outage")
            server.clock.advance(61)
            try server.signUp("second@example.com")
            server.tick()
            #expect(try server.services.webhooks.find(id).status == .disabled)
            #expect(try server.auditKinds().filter { $0 == "webhook.disabled" }.count == 1)
        }
    }
}
