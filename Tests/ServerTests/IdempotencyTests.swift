import API
import Core
import Foundation
import HTTP
import Logging
import ServerTestSupport
import Store
import Synchronization
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

@Suite("Idempotency-Key")
struct IdempotencyTests {
    static let mobile = "447400123457"

    /// A verification start with `Idempotency-Key: key`.
    static func start(_ api: VerifyClient, key: String?, to number: String = mobile) throws -> HTTPTestClient.Response {
        var headers = ["Authorization": api.authorization, "Content-Type": "application/json"]
        if let key { headers["Idempotency-Key"] = key }
        let body: [String: Any] = ["brand": "Acme", "workflow": [["channel": "sms", "to": number]]]
        return try api.server.send(
            "POST", "/v2/verify", headers: headers, body: Array(try JSONSerialization.data(withJSONObject: body)))
    }

    static func texts(_ server: TestServer, to number: String = mobile) throws -> Int {
        try server.outbox(to: number).count { $0.channel == "sms" }
    }

    @Test(
        "a repeated start with the same key answers the first request again and sends one text", arguments: Backend.all)
    func replay(backend: Backend) throws {
        try backend.withServer { server throws in
            let api = try VerifyClient(server)
            let first = try Self.start(api, key: "\"start-1\"")
            #expect(first.status == 202)
            #expect(first.header("idempotent-replayed") == nil)
            let again = try Self.start(api, key: "\"start-1\"")
            #expect(again.status == 202)
            #expect(again.header("idempotent-replayed") == "true")
            #expect(again.header("content-type") == "application/json")
            #expect(again.body == first.body)
            #expect(again.header("x-request-id") != first.header("x-request-id"))
            #expect(try Self.texts(server) == 1)
            // The same object encoded in another key order and spacing is the same request.
            let reordered = try api.server.send(
                "POST", "/v2/verify",
                headers: [
                    "Authorization": api.authorization, "Content-Type": "application/json",
                    "Idempotency-Key": "start-1",
                ],
                body: Array(#"{ "workflow": [ {"to": "\#(Self.mobile)", "channel": "sms"} ], "brand": "Acme" }"#.utf8))
            #expect(reordered.header("idempotent-replayed") == "true")
            #expect(reordered.body == first.body)
            // The bare token form names the same key as the quoted string.
            #expect(try Self.start(api, key: "start-1").header("idempotent-replayed") == "true")
            // The same key for another number is another request: refused, nothing sent.
            let other = try Self.start(api, key: "start-1", to: "447400123458")
            #expect(other.status == 422)
            #expect(try other.problem.title == "Idempotency Key Reused")
            #expect(try server.outbox(to: "447400123458").isEmpty)
            // Without a key, the start is what it always was: the number is busy.
            #expect(try Self.start(api, key: nil).status == 409)
        }
    }

    @Test("keys belong to their API key; a malformed key is refused before anything happens", arguments: Backend.all)
    func scopeAndValidation(backend: Backend) throws {
        try backend.withServer { server throws in
            let api = try VerifyClient(server)
            let other = try VerifyClient(server, name: "other")
            #expect(try Self.start(api, key: "shared").status == 202)
            let theirs = try Self.start(other, key: "shared", to: "447400123459")
            #expect(theirs.status == 202)
            #expect(theirs.header("idempotent-replayed") == nil)
            for bad in ["\"\"", String(repeating: "k", count: 256), "with space", "qu\"ote"] {
                let r = try Self.start(api, key: bad, to: "447400123460")
                #expect(r.status == 400, "\(bad)")
                #expect(try r.problem.title == "Invalid Idempotency Key")
            }
            #expect(try server.outbox(to: "447400123460").isEmpty)
            #expect(try Self.start(api, key: String(repeating: "k", count: 255), to: "447400123460").status == 202)
        }
    }

    @Test(
        "a keyed body over 16 KiB, 128 members or 8 levels deep is refused with 413 before any work, on anonymous routes too; without a key it is served"
    )
    func oversizedKeyedBody() throws {
        try Backend.all[0].withServer { server throws in
            let api = try VerifyClient(server)
            // About 5,000 members: sorting them used to cost 170 ms before any rate limit.
            let padding = Dictionary(uniqueKeysWithValues: (0..<5_000).map { ("k\($0)", $0) })
            let body: [String: Any] = [
                "brand": "Acme", "workflow": [["channel": "sms", "to": Self.mobile]], "padding": padding,
            ]
            let bytes = Array(try JSONSerialization.data(withJSONObject: body))
            #expect(bytes.count > Idempotency.maxBodyBytes)
            let refused = try server.send(
                "POST", "/v2/verify",
                headers: [
                    "Authorization": api.authorization, "Content-Type": "application/json",
                    "Idempotency-Key": "big",
                ], body: bytes)
            #expect(refused.status == 413)
            #expect(try refused.problem.code == "idempotent_body_too_large")
            #expect(try Self.texts(server) == 0)
            let anonymous = try server.send(
                "POST", "/v1/accounts/verify-email/resend",
                headers: ["Content-Type": "application/json", "Idempotency-Key": "big"],
                body: Array(try JSONSerialization.data(withJSONObject: ["email": "a@example.com", "padding": padding])))
            #expect(anonymous.status == 413)
            #expect(try anonymous.problem.code == "idempotent_body_too_large")
            // Small, but with far more members than any keyed operation takes.
            let members = try server.send(
                "POST", "/v1/accounts/verify-email/resend",
                headers: ["Content-Type": "application/json", "Idempotency-Key": "wide"],
                body: Array(
                    try JSONSerialization.data(withJSONObject: [
                        "email": "a@example.com",
                        "padding": Array(repeating: 1, count: 200),
                    ])))
            #expect(members.status == 413)
            // Deep, not wide: 500 nested arrays in 1 KiB once cost 1.7 s of type guesses.
            let deep = try server.send(
                "POST", "/v1/accounts/verify-email/resend",
                headers: ["Content-Type": "application/json", "Idempotency-Key": "deep"],
                body: Array(
                    ("{\"email\": \"a@example.com\", \"p\": " + String(repeating: "[", count: 500)
                        + String(repeating: "]", count: 500) + "}").utf8))
            #expect(deep.status == 413)
            #expect(try deep.problem.code == "idempotent_body_too_large")
            #expect(
                try server.send(
                    "POST", "/v1/accounts/verify-email/resend",
                    headers: ["Content-Type": "application/json", "Idempotency-Key": "narrow"],
                    body: Array(#"{"email": "a@example.com", "note": "a, b: c"}"#.utf8)
                ).status == 202)
            // Without a key the route decodes what it needs and ignores the rest, as before.
            #expect(
                try server.send(
                    "POST", "/v2/verify",
                    headers: ["Authorization": api.authorization, "Content-Type": "application/json"],
                    body: bytes
                ).status == 202)
        }
    }

    @Test("the canonical form of a JSON body ignores key order and spacing but tells apart every different value")
    func canonicalForm() {
        func same(_ a: String, _ b: String) -> Bool {
            Idempotency.canonical(Array(a.utf8)) == Idempotency.canonical(Array(b.utf8))
        }
        #expect(
            same(
                #"{"a":1,"b":[true,null,{"y":"x","z":2.5}]}"#,
                #" { "b" : [ true , null , { "z" : 2.5 , "y" : "x" } ] , "a" : 1 } "#))
        for (a, b) in [
            (#"{"a":"1"}"#, #"{"a":1}"#), (#"["ab"]"#, #"["a","b"]"#), (#"{"a":{"b":1}}"#, #"{"a":[1]}"#),
            (#"{"ab":"c"}"#, #"{"a":"bc"}"#), (#"{"a":1}"#, #"{"a":1.5}"#), (#"{"a":true}"#, #"{"a":"t"}"#),
            (#"{"a":null}"#, #"{}"#), ("not json", "not  json"),
        ] {
            #expect(!same(a, b), "\(a) and \(b)")
        }
        // A body that is not JSON is compared as it is.
        #expect(Idempotency.canonical(Array("code=1".utf8)) == Array("code=1".utf8))
        // Members and nesting are counted outside strings only, escaped quotes included.
        #expect(Idempotency.shape(Array(#"{"a": "x, y: \", [z", "b": [1, 2]}"#.utf8)) == (members: 6, depth: 2))
        #expect(
            Idempotency.shape(Array((String(repeating: "[", count: 500) + String(repeating: "]", count: 500)).utf8))
                .depth == 500)
    }

    @Test(
        "a refused request keeps no answer: its audit entry stays, and the key serves the corrected retry",
        arguments: Backend.all)
    func refusalsAreNotKept(backend: Backend) throws {
        try backend.withServer { server throws in
            let api = try VerifyClient(server)
            var headers = [
                "Authorization": api.authorization, "Content-Type": "application/json", "Idempotency-Key": "retry-me",
            ]
            let bad = try server.send(
                "POST", "/v2/verify", headers: headers, body: Array(#"{"brand":"Acme","workflow":[]}"#.utf8))
            #expect(bad.status == 422)
            #expect(try server.auditKinds().contains("verify.refused"))
            let fixed = try Self.start(api, key: "retry-me")
            #expect(fixed.status == 202)
            #expect(fixed.header("idempotent-replayed") == nil)
            // Wrong credentials are refused before any key is looked at.
            headers["Authorization"] = "Basic " + Data("nobody:nothing".utf8).base64EncodedString()
            #expect(
                try server.send(
                    "POST", "/v2/verify", headers: headers, body: Array(#"{"brand":"Acme","workflow":[]}"#.utf8)
                ).status == 401)
        }
    }

    @Test(
        "eight concurrent starts with one key: one verification, one text, eight equal answers", arguments: Backend.all)
    func concurrent(backend: Backend) throws {
        try backend.withServer { server throws in
            let api = try VerifyClient(server)
            let answers = Mutex<[(status: Int, body: [UInt8], replayed: String?)]>([])
            let port = server.port
            let auth = api.authorization
            let body = Array(#"{"brand":"Acme","workflow":[{"channel":"sms","to":"\#(Self.mobile)"}]}"#.utf8)
            runThreads(8) { _ in
                let headers = ["Authorization": auth, "Content-Type": "application/json", "Idempotency-Key": "at-once"]
                if let r = try? HTTPTestClient(port: port).request("POST", "/v2/verify", headers: headers, body: body) {
                    answers.withLock { $0.append((r.status, r.body, r.header("idempotent-replayed"))) }
                }
            }
            let all = answers.withLock { $0 }
            #expect(all.count == 8)
            #expect(all.allSatisfy { $0.status == 202 && $0.body == all[0].body })
            #expect(all.count { $0.replayed == "true" } == 7)
            #expect(try Self.texts(server) == 1)
        }
    }

    @Test("a kept answer is forgotten after a day, and housekeeping removes it", arguments: Backend.all)
    func expiry(backend: Backend) throws {
        try backend.withServer { server throws in
            let api = try VerifyClient(server)
            let first = try Self.start(api, key: "daily")
            #expect(first.status == 202)
            server.clock.advance(86_401)
            let later = try Self.start(api, key: "daily")
            #expect(later.status == 202)
            #expect(later.header("idempotent-replayed") == nil)
            #expect(later.body != first.body)
            server.clock.advance(86_401)
            let report = try server.database.transaction { try Housekeeping.purge(now: server.nowMillis, on: $0) }
            #expect(report?.idempotencyKeys == 1)
        }
    }

    @Test(
        "a step-up text and a second-step text are sent once per key, and each user's keys are their own",
        arguments: Backend.all)
    func secondStep(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "idem@example.com")
            let phone = try user.enrollPhone("+447400123461")
            let other = try MFAClient(server, email: "idem2@example.com")
            let otherPhone = try other.enrollPhone("+447400123462")
            func stepUp(_ client: MFAClient, _ factor: String) throws -> HTTPTestClient.Response {
                try server.send(
                    "POST", "/v1/session/step-up",
                    headers: [
                        "Content-Type": "application/json", "Idempotency-Key": "step-up",
                        "Authorization": "Bearer \(client.token)",
                    ],
                    body: Array(try JSONSerialization.data(withJSONObject: ["enrollment_id": factor])))
            }
            let mine = try Self.texts(server, to: "447400123461")
            let theirs = try Self.texts(server, to: "447400123462")
            #expect(try stepUp(user, phone).status == 202)
            #expect(try stepUp(user, phone).header("idempotent-replayed") == "true")
            let otherAnswer = try stepUp(other, otherPhone)
            #expect(otherAnswer.status == 202)
            #expect(otherAnswer.header("idempotent-replayed") == nil)
            #expect(try Self.texts(server, to: "447400123461") == mine + 1)
            #expect(try Self.texts(server, to: "447400123462") == theirs + 1)
            // Once the step-up's code has run out, a sign-in's second step sends a text of its own.
            server.clock.advance(601)
            server.tick()
            let before = try Self.texts(server, to: "447400123461")
            let pending = try user.passwordSignIn().decode(MFARequired.self).pendingCredential
            let body = Array(
                try JSONSerialization.data(withJSONObject: ["pending_credential": pending, "enrollment_id": phone]))
            let headers = ["Content-Type": "application/json", "Idempotency-Key": "second-step"]
            let first = try server.send("POST", "/v1/mfa/sign-in/challenges", headers: headers, body: body)
            let again = try server.send("POST", "/v1/mfa/sign-in/challenges", headers: headers, body: body)
            #expect(first.status == 202 && again.status == 202)
            #expect(again.header("idempotent-replayed") == "true")
            #expect(try Self.texts(server, to: "447400123461") == before + 1)
            #expect(
                try server.send("POST", "/v1/session/step-up", headers: ["Idempotency-Key": "step-up"]).status == 401)
        }
    }

    @Test(
        "a step-up key belongs to its session, and an erased account takes its kept answers with it",
        arguments: Backend.all)
    func perSessionAndErased(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "two-sessions@example.com")
            let factor = try user.enrollTOTP()
            // A second session of the same user, signed in with the app in the next step.
            server.clock.advance(30)
            let pending = try user.passwordSignIn().decode(MFARequired.self).pendingCredential
            let second = try server.json(
                "POST", "/v1/sessions/mfa",
                [
                    "pending_credential": pending, "enrollment_id": factor.id,
                    "code": user.totp(factor.secret),
                ]
            ).decode(SessionCreated.self).token
            server.clock.advance(30)
            let body = Array(
                try JSONSerialization.data(withJSONObject: [
                    "enrollment_id": factor.id, "code": user.totp(factor.secret),
                ]))
            func stepUp(_ token: String) throws -> HTTPTestClient.Response {
                try server.send(
                    "POST", "/v1/session/step-up",
                    headers: [
                        "Content-Type": "application/json", "Idempotency-Key": "mine",
                        "Authorization": "Bearer \(token)",
                    ], body: body)
            }
            #expect(try stepUp(user.token).status == 200)
            #expect(try stepUp(user.token).header("idempotent-replayed") == "true")
            // The other session's request with that key and body is its own: it runs, and the used code is refused.
            let other = try stepUp(second)
            #expect(other.status == 400)
            #expect(other.header("idempotent-replayed") == nil)
            let id = try server.get("/v1/session", token: user.token).decode(CurrentSession.self).user.id
            func kept() throws -> Int64 {
                try server.database.read {
                    try $0.queryOne("SELECT COUNT(*) AS n FROM idempotency_keys WHERE user_id = $1", [.text(id)])?.int(
                        "n") ?? -1
                }
            }
            #expect(try kept() == 1)
            _ = try server.services.admin.delete(
                UserID(id), actor: .init(name: "test", client: AuditContext(ip: "local", userAgent: "tests")))
            #expect(try kept() == 0)
        }
    }

    @Test("a refused start answered 503 keeps its audit entry and no answer")
    func refusedWith503() throws {
        try Backend.all[0].withFreshDatabase { database, _ in
            let server = try TestServer(
                database: database, configuration: TestServer.configuration { $0.dev = false }, withSender: false)
            let api = try VerifyClient(server)
            let first = try Self.start(api, key: "no-sender")
            #expect(first.status == 503)
            #expect(try first.problem.code == "delivery_unavailable")
            #expect(try server.auditKinds().filter { $0 == "verify.refused" }.count == 1)
            let again = try Self.start(api, key: "no-sender")
            #expect(again.status == 503)
            #expect(again.header("idempotent-replayed") == nil)
            #expect(try server.auditKinds().filter { $0 == "verify.refused" }.count == 2)
        }
    }

}
