import API
import Foundation
import Messaging
import ServerTestSupport
import Store
import Synchronization
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

@Suite("Phone verification API")
struct VerifyTests {
    static let mobile = "447400123456"

    @Test(
        "start, wrong code, right code, then not found — with the texts Vonage clients expect", arguments: Backend.all)
    func happyPath(backend: Backend) throws {
        try backend.withServer { server throws in
            let api = try VerifyClient(server)
            let start = try api.start(Self.mobile)
            #expect(start.status == 202)
            let id = try start.decode(VerificationStarted.self).requestID
            #expect(UUID(uuidString: id) != nil)
            let text = try #require(try api.messages(to: Self.mobile).first?.text)
            #expect(text.hasPrefix("Acme: your verification code is ") && text.contains("Valid for 5 min."))
            let code = try #require(try api.smsCode(to: Self.mobile))
            #expect(code.count == 6)
            #expect(api.delivered(1))
            #expect(server.sender.sent.first?.to == Self.mobile && server.sender.sent.first?.text == text)
            let wrong = try api.check(id, code == "000000" ? "111111" : "000000")
            #expect(wrong.status == 400)
            #expect(wrong.header("content-type") == "application/problem+json")
            #expect(try wrong.problem.title == "Invalid Code")
            #expect(try wrong.problem.detail == "The code you provided does not match the expected value.")
            #expect(try wrong.problem.instance == wrong.header("x-request-id"))
            let right = try api.check(id, code)
            #expect(right.status == 200)
            #expect(try right.decode(CodeChecked.self) == CodeChecked(requestID: id))
            let again = try api.check(id, code)
            #expect(again.status == 404)
            #expect(try again.problem.detail == "Request '\(id)' was not found or it has been verified already.")
            #expect(try server.auditKinds().contains("verify.completed"))
        }
    }

    @Test(
        "the third wrong code ends the request with 410, and then even the right code is not found",
        arguments: Backend.all)
    func threeStrikes(backend: Backend) throws {
        try backend.withServer { server throws in
            let api = try VerifyClient(server)
            let id = try api.started(Self.mobile)
            let code = try #require(try api.smsCode(to: Self.mobile))
            let wrong = code == "999999" ? "888888" : "999999"
            #expect(try api.check(id, wrong).status == 400)
            #expect(try api.check(id, wrong).status == 400)
            let third = try api.check(id, wrong)
            #expect(third.status == 410)
            #expect(
                try third.problem.detail == "An incorrect code has been provided too many times. Workflow terminated.")
            #expect(try api.check(id, code).status == 404)
            #expect(try server.auditKinds().contains("verify.terminated"))
        }
    }

    @Test("concurrent wrong checks get three tries in all", arguments: Backend.all)
    func concurrentChecks(backend: Backend) throws {
        try backend.withServer { server throws in
            let api = try VerifyClient(server)
            let id = try api.started(Self.mobile)
            let code = try #require(try api.smsCode(to: Self.mobile))
            let wrong = code == "999999" ? "888888" : "999999"
            let statuses = Mutex<[Int]>([])
            let port = server.port
            let auth = api.authorization
            runThreads(8) { _ in
                let status =
                    (try? HTTPTestClient(port: port).request(
                        "POST", "/v2/verify/\(id)",
                        headers: ["Authorization": auth, "Content-Type": "application/json"],
                        body: Array(#"{"code":"\#(wrong)"}"#.utf8)
                    ).status) ?? 0
                statuses.withLock { $0.append(status) }
            }
            let all = statuses.withLock { $0 }.sorted()
            #expect(all.filter { $0 == 400 }.count == 2)
            #expect(all.filter { $0 == 410 }.count == 1)
            #expect(all.filter { $0 == 404 }.count == 5)
        }
    }

    @Test(
        "racing checks on two instances of one database never get a 5xx: each request ends once, by its code or its third wrong one",
        arguments: Backend.all)
    func racingChecksOnTwoInstances(backend: Backend) throws {
        let configuration = TestServer.configuration {
            $0.verify.testNumbers = ["447400123999": "1234"]
            $0.verify.perKeyBurst = 10_000
            $0.verify.perIPBurst = 10_000
        }
        try backend.withTwoInstances(configuration, poolSize: 4) { first, second in
            let api = try VerifyClient(first)
            let ports = [first.port, second.port]
            let auth = api.authorization
            for round in 0..<10 {
                let id = try api.started("447400123999")
                let statuses = Mutex<[Int]>([])
                runThreads(16) { index in
                    let code = index == 7 ? "1234" : "9999"
                    let status =
                        (try? HTTPTestClient(port: ports[(index + round) % 2]).request(
                            "POST", "/v2/verify/\(id)",
                            headers: ["Authorization": auth, "Content-Type": "application/json"],
                            body: Array(#"{"code":"\#(code)"}"#.utf8)
                        ).status) ?? 0
                    statuses.withLock { $0.append(status) }
                }
                let all = statuses.withLock { $0 }
                #expect(all.allSatisfy { [200, 400, 404, 410].contains($0) }, "round \(round): \(all.sorted())")
                #expect(all.filter { $0 == 200 || $0 == 410 }.count == 1, "round \(round): \(all.sorted())")
                #expect(all.filter { $0 == 400 }.count <= 2, "round \(round): \(all.sorted())")
            }
        }
    }

    @Test(
        "one running request per number: a second start is 409 naming the first, and nothing is sent for it",
        arguments: Backend.all)
    func oneAtATime(backend: Backend) throws {
        try backend.withServer { server throws in
            let api = try VerifyClient(server)
            let id = try api.started(Self.mobile)
            let second = try api.start(Self.mobile, channels: ["voice"])
            #expect(second.status == 409)
            #expect(try second.problem.detail == "Concurrent verifications to the same number are not allowed.")
            #expect(try second.problem.requestID == id)
            #expect(try api.messages(to: Self.mobile).count == 1)
            // Once the first is over, the number is free.
            #expect(try api.check(id, try #require(try api.smsCode(to: Self.mobile))).status == 200)
            #expect(try api.start(Self.mobile).status == 202)
        }
    }

    @Test("simultaneous starts for one number: exactly one runs, the others get 409", arguments: Backend.all)
    func simultaneousStarts(backend: Backend) throws {
        try backend.withServer { server throws in
            let api = try VerifyClient(server)
            let port = server.port
            let auth = api.authorization
            let statuses = Mutex<[Int]>([])
            let body = Array(#"{"brand":"Acme","workflow":[{"channel":"sms","to":"447400123456"}]}"#.utf8)
            runThreads(6) { _ in
                let status =
                    (try? HTTPTestClient(port: port).request(
                        "POST", "/v2/verify", headers: ["Authorization": auth, "Content-Type": "application/json"],
                        body: body
                    ).status) ?? 0
                statuses.withLock { $0.append(status) }
            }
            let all = statuses.withLock { $0 }
            #expect(all.filter { $0 == 202 }.count == 1)
            #expect(all.filter { $0 == 409 }.count == 5)
            #expect(try api.messages(to: Self.mobile).count == 1)
        }
    }

    @Test("another API key may verify the same number and learns nothing of the first key's request")
    func tenants() throws {
        try Backend.all[0].withServer { server throws in
            let first = try VerifyClient(server, name: "bank")
            let second = try VerifyClient(server, name: "shop")
            let id = try first.started(Self.mobile)
            let other = try second.start(Self.mobile)
            #expect(other.status == 202)
            #expect(try other.decode(VerificationStarted.self).requestID != id)
        }
    }

    @Test("without a message sender, starting answers 503 unless every number is a test number")
    func noSender() throws {
        try Backend.all[0].withFreshDatabase { database, _ in
            let config = TestServer.configuration {
                $0.dev = false
                $0.verify.testNumbers = ["447400123999": "4242"]
            }
            let server = try TestServer(database: database, configuration: config, withSender: false)
            let api = try VerifyClient(server)
            let r = try api.start(Self.mobile)
            #expect(r.status == 503)
            #expect(try r.problem.code == "delivery_unavailable")
            #expect(try api.start("447400123999").status == 202)
        }
    }

    @Test("cancel is refused at 29 s, works at 30 s, and is refused once the second step fired", arguments: Backend.all)
    func cancel(backend: Backend) throws {
        try backend.withServer { server throws in
            let api = try VerifyClient(server)
            let id = try api.started(Self.mobile, channels: ["sms", "voice"])
            #expect(api.delivered(1))
            server.clock.advance(29)
            let early = try api.call("DELETE", "/v2/verify/\(id)")
            #expect(early.status == 409)
            #expect(
                try early.problem.detail
                    == "Verification request [\(id)] can't be cancelled within the first 30 seconds.")
            server.clock.advance(1)
            #expect(try api.call("DELETE", "/v2/verify/\(id)").status == 204)
            #expect(try api.check(id, "1234").status == 404)
            // The held voice step was voided, never sent.
            #expect(try api.messages(to: Self.mobile).map(\.channel) == ["sms"])

            let other = "447400123457"
            let id2 = try api.started(other, channels: ["sms", "voice"])
            #expect(try api.call("POST", "/v2/verify/\(id2)/next_workflow").status == 200)
            server.clock.advance(31)
            let late = try api.call("DELETE", "/v2/verify/\(id2)")
            #expect(late.status == 409)
            #expect(try late.problem.detail.contains("can't be cancelled now"))
        }
    }

    @Test(
        "next workflow fires the voice step with the same code spelled out; with no step left it is 409",
        arguments: Backend.all)
    func nextWorkflow(backend: Backend) throws {
        try backend.withServer { server throws in
            let api = try VerifyClient(server)
            let id = try api.started(Self.mobile, channels: ["sms", "voice"])
            let code = try #require(try api.smsCode(to: Self.mobile))
            #expect(try api.call("POST", "/v2/verify/\(id)/next_workflow").status == 200)
            let voice = try #require(try api.messages(to: Self.mobile).first { $0.channel == "voice" })
            #expect(voice.text.contains(code.map(String.init).joined(separator: ", ")))
            let none = try api.call("POST", "/v2/verify/\(id)/next-workflow")
            #expect(none.status == 409)
            #expect(try none.problem.detail == "There are no more events left to trigger.")
        }
    }

    @Test(
        "a timed-out step fires the next one from the database timer; after the last the request expires",
        arguments: Backend.all)
    func timers(backend: Backend) throws {
        try backend.withServer { server throws in
            let api = try VerifyClient(server)
            let id = try api.started(Self.mobile, channels: ["sms", "voice"], extra: ["channel_timeout": 60])
            #expect(api.delivered(1))
            server.clock.advance(60)
            try server.services.verifications.runDue()
            #expect(try api.messages(to: Self.mobile).first?.channel == "voice")
            server.clock.advance(60)
            try server.services.verifications.runDue()
            #expect(try server.auditKinds().contains("verify.expired"))
            #expect(try api.check(id, try #require(try api.smsCode(to: Self.mobile))).status == 404)
            #expect(try api.start(Self.mobile).status == 202)
        }
    }

    @Test("a request survives a restart of the server", arguments: Backend.all)
    func restart(backend: Backend) throws {
        try backend.withFreshDatabase { database, _ in
            var id = ""
            var code = ""
            var apiKey = ""
            var secret = ""
            do {
                let server = try TestServer(database: database)
                let api = try VerifyClient(server)
                (apiKey, secret) = (api.apiKey, api.secret)
                id = try api.started(Self.mobile)
                code = try #require(try api.smsCode(to: Self.mobile))
            }
            let server = try TestServer(database: database)
            let auth = "Basic " + Data("\(apiKey):\(secret)".utf8).base64EncodedString()
            let r = try server.send(
                "POST", "/v2/verify/\(id)", headers: ["Authorization": auth, "Content-Type": "application/json"],
                body: Array(#"{"code":"\#(code)"}"#.utf8))
            #expect(r.status == 200)
        }
    }
}
