import API
import Core
import Crypto
import Foundation
import Messaging
import Phone
import ServerTestSupport
import Store
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

@Suite("Phone verification: access, validation, limits, delivery")
struct VerifyPolicyTests {
    static let mobile = "447400123456"

    @Test("no credentials, a wrong secret and a revoked key get 401; another key's request is not found")
    func authentication() throws {
        try Backend.all[0].withServer { server throws in
            let api = try VerifyClient(server)
            let none = try server.send(
                "POST", "/v2/verify", headers: ["Content-Type": "application/json"], body: Array("{}".utf8))
            #expect(none.status == 401)
            #expect(none.header("www-authenticate")?.hasPrefix("Basic") == true)
            let wrong = "Basic " + Data("\(api.apiKey):not-the-secret".utf8).base64EncodedString()
            #expect(try api.call("POST", "/v2/verify", [:], authorization: wrong).status == 401)
            let id = try api.started(Self.mobile)
            let other = try VerifyClient(server, name: "other tenant")
            #expect(try other.check(id, "123456").status == 404)
            #expect(try server.database.transaction { try server.services.keys.revoke(apiKey: api.apiKey, on: $0) })
            #expect(try api.check(id, "123456").status == 401)
            #expect(try server.auditKinds().contains("api_key.rejected"))
        }
    }

    @Test("invalid fields are all named in one 422, fixed lines cannot get SMS, and nothing is sent")
    func validation() throws {
        try Backend.all[0].withServer { server throws in
            let api = try VerifyClient(server)
            let r = try api.call(
                "POST", "/v2/verify",
                [
                    "brand": "Ac/me", "code_length": 3, "channel_timeout": 5, "locale": "xx-yy", "code": "12",
                    "workflow": [
                        ["channel": "sms", "to": "441212345678"], ["channel": "email", "to": "a@b.c"],
                        ["channel": "voice", "to": "+447400123456"],
                    ],
                ])
            #expect(r.status == 422)
            #expect(try r.problem.title == "Invalid params")
            let names = try r.problem.invalidParameters?.map(\.name) ?? []
            #expect(
                names == [
                    "brand", "workflow[0].to", "workflow[1].channel", "workflow[2].to", "locale", "channel_timeout",
                    "code_length", "code",
                ])
            let reason = try r.problem.invalidParameters?.first { $0.name == "workflow[0].to" }?.reason
            #expect(reason?.contains("cannot receive SMS") == true)
            #expect(try api.call("POST", "/v2/verify", ["workflow": []]).problem.invalidParameters != nil)
            #expect(try api.call("POST", "/v2/verify", ["brand": 42]).status == 422)
            #expect(try server.get("/dev/outbox").decode(OutboxListing.self).messages.isEmpty)
            // A fixed line can still be called.
            #expect(try api.start("441212345678", channels: ["voice"]).status == 202)
        }
    }

    @Test(
        "premium-rate numbers never get a call, and the country lists refuse what they exclude, naming the step; nothing is sent"
    )
    func destinations() throws {
        // 0909 numbers in the UK are premium rate: a call there earns its owner money.
        #expect(try PhoneNumber(parsing: "+449098790879").kind == .premiumRate)
        try Backend.all[0].withServer(TestServer.configuration { $0.verify.deniedCountries = [7] }) { server throws in
            let api = try VerifyClient(server)
            let premium = try api.start("449098790879", channels: ["voice"])
            #expect(premium.status == 422)
            #expect(try premium.problem.invalidParameters?.first?.name == "workflow[0].to")
            #expect(try premium.problem.invalidParameters?.first?.reason.contains("premium rate") == true)
            let denied = try api.start("79123456789", channels: ["sms"])
            #expect(denied.status == 422)
            #expect(try denied.problem.invalidParameters?.first?.reason.contains("+7") == true)
            #expect(try api.start(Self.mobile).status == 202)
            server.tick()
            #expect(server.sender.sent.allSatisfy { $0.to == Self.mobile })
            #expect(try server.auditKinds().filter { $0 == "verify.refused" }.count >= 2)
        }
        try Backend.all[0].withServer(TestServer.configuration { $0.verify.allowedCountries = [44] }) { server throws in
            let api = try VerifyClient(server)
            #expect(try api.start("12015550123", channels: ["voice"]).status == 422)
            #expect(try api.start(Self.mobile).status == 202)
            // A phone factor is held to the same list.
            let user = try MFAClient(server, email: "abroad@example.com")
            let enroll = try user.call("POST", "/v1/mfa/enrollments", ["kind": "phone", "phone": "+12015550123"])
            #expect(enroll.status == 422)
            #expect(try enroll.problem.invalidParams?.first?.reason.contains("+1") == true)
        }
    }

    @Test(
        "a burst to one number prefix is stopped by its budget while other prefixes go through; the operator is told in the log"
    )
    func prefixBudget() throws {
        let configuration = TestServer.configuration { $0.verify.budgets.prefix = .init(perHour: 2, perDay: 10) }
        try Backend.all[0].withServer(configuration) { server throws in
            let api = try VerifyClient(server)
            #expect(try api.start("447400123451").status == 202)
            #expect(try api.start("447400123452", channels: ["voice"]).status == 202)
            let third = try api.start("447400123453")
            #expect(third.status == 429)
            #expect(Int(third.header("retry-after") ?? "") ?? 0 > 0)
            #expect(try api.start("447911123456").status == 202)  // another prefix
            #expect(server.log.all.contains { $0.contains("verify_budget_exceeded") && $0.contains("prefix:44740012") })
            #expect(try server.auditKinds().last(where: { $0 == "verify.refused" }) != nil)
            // An hour later the budget has refilled.
            server.clock.advance(3600)
            #expect(try api.start("447400123454").status == 202)
        }
    }

    @Test(
        "when a country's codes stop being entered, new ones to it are refused; other countries go on; completions release it",
        arguments: Backend.all)
    func conversionGuard(backend: Backend) throws {
        let configuration = TestServer.configuration {
            $0.verify.conversion = .init(minimumRate: 0.5, minimumVolume: 4, windowHours: 24)
        }
        try backend.withServer(configuration) { server throws in
            let api = try VerifyClient(server)
            let numbers = ["447400123451", "447400123452", "447400123453", "447400123454"]
            var ids: [String] = []
            for number in numbers { ids.append(try api.started(number)) }
            let refused = try api.start("447400123455")
            #expect(refused.status == 429)
            #expect(server.log.all.contains { $0.contains("verify_conversion_low") && $0.contains("\"country\":44") })
            #expect(try api.start("4915112345678").status == 202)  // Germany converts fine: untouched
            // Two of the four codes are entered: half of them, the threshold. The country is released.
            server.tick()
            for (id, number) in zip(ids, numbers).prefix(2) {
                #expect(try api.check(id, try #require(try api.smsCode(to: number))).status == 200)
            }
            #expect(try api.start("447400123455").status == 202)
        }
    }

    @Test(
        "held for review instead: the start is accepted, nothing goes out until an operator releases it, and a dropped one never goes",
        arguments: Backend.all)
    func conversionHold(backend: Backend) throws {
        let configuration = TestServer.configuration {
            $0.verify.conversion = .init(minimumRate: 0.5, minimumVolume: 4, windowHours: 24)
            $0.verify.conversion.holdForReview = true
        }
        try backend.withServer(configuration) { server throws in
            let api = try VerifyClient(server)
            for number in ["447400123451", "447400123452", "447400123453", "447400123454"] {
                _ = try api.started(number)
            }
            let held = try api.started("447400123455", channels: ["sms", "voice"])
            let dropped = try api.started("447400123456")
            server.tick()
            #expect(!server.sender.sent.contains { ["447400123455", "447400123456"].contains($0.to) })
            let queue = try server.database.transaction { try ReviewQueue.list(limit: 10, on: $0) }
            #expect(
                queue.map(\.requestID) == [held, held, dropped] && queue.map(\.channel) == ["sms", "voice", "sms"])
            #expect(
                try server.database.transaction {
                    try ReviewQueue.release(VerificationID(held), now: server.nowMillis, on: $0)
                } == .released(sent: 1))
            #expect(
                try server.database.transaction {
                    try ReviewQueue.drop(VerificationID(dropped), now: server.nowMillis, on: $0)
                } == .dropped)
            #expect(
                try server.database.transaction {
                    try ReviewQueue.drop(VerificationID(dropped), now: server.nowMillis, on: $0)
                } == .notFound)
            server.tick()
            // The text goes now; the call waits for its step, as any held step does.
            #expect(server.sender.sent.filter { $0.to == "447400123455" }.map(\.channel) == [.sms])
            #expect(!server.sender.sent.contains { $0.to == "447400123456" })
            let kinds = try server.auditKinds()
            #expect(kinds.contains("verify.review_released") && kinds.contains("verify.review_dropped"))
            #expect(server.log.all.contains { $0.contains("verify_conversion_low") && $0.contains("held for review") })
        }
    }

    @Test("a number gets five requests per ten minutes, then 429 with Retry-After")
    func perNumberLimit() throws {
        try Backend.all[0].withServer { server throws in
            let api = try VerifyClient(server)
            for _ in 0..<5 {
                let id = try api.started(Self.mobile)
                #expect(try api.check(id, try #require(try api.smsCode(to: Self.mobile))).status == 200)
            }
            let limited = try api.start(Self.mobile)
            #expect(limited.status == 429)
            #expect(try limited.problem.title == "Rate Limit Hit")
            #expect(Int(limited.header("retry-after") ?? "") ?? 0 > 0)
            #expect(try server.auditKinds().contains("verify.refused"))
        }
    }

    @Test("wrong codes count per number across requests: a new request does not reset them")
    func failuresAcrossRequests() throws {
        let config = TestServer.configuration { $0.verify.maxFailuresPerNumber = 4 }
        try Backend.all[0].withServer(config) { server throws in
            let api = try VerifyClient(server)
            let first = try api.started(Self.mobile)
            for _ in 0..<3 { _ = try api.check(first, "zzzz") }
            let second = try api.started(Self.mobile)
            #expect(try api.check(second, "zzzz").status == 400)
            server.clock.advance(30)
            _ = try api.call("DELETE", "/v2/verify/\(second)")
            #expect(try api.start(Self.mobile).status == 429)
            server.clock.advance(86_401)
            #expect(try api.start(Self.mobile).status == 202)
        }
    }

    @Test("a test number takes its fixed code and never sends anything")
    func testNumbers() throws {
        let config = TestServer.configuration { $0.verify.testNumbers = ["447400123999": "4242"] }
        try Backend.all[0].withServer(config) { server throws in
            let api = try VerifyClient(server)
            let id = try api.started("447400123999", channels: ["sms", "voice"])
            #expect(try api.call("POST", "/v2/verify/\(id)/next_workflow").status == 200)
            #expect(try api.messages(to: "447400123999").isEmpty)
            #expect(try api.check(id, "4242").status == 200)
            server.tick()
            #expect(server.sender.sent.isEmpty)
        }
    }

    @Test(
        "a message that cannot be delivered moves the workflow to its next step; the caller only sees the request go on",
        arguments: Backend.all)
    func deliveryFailure(backend: Backend) throws {
        try backend.withServer { server throws in
            server.sender.fail(with: DeliveryError(reason: "carrier refused the number", retryable: false))
            let api = try VerifyClient(server)
            let id = try api.started(Self.mobile, channels: ["sms", "voice"])
            server.tick()
            #expect(try api.messages(to: Self.mobile).contains { $0.channel == "sms" && $0.status == "failed" })
            #expect(try api.messages(to: Self.mobile).contains { $0.channel == "voice" })
            #expect(try server.auditKinds().contains("delivery.failed"))
            #expect(try server.auditKinds().contains("verify.step_fired"))
            // The failed SMS's text is gone; the request itself is still in progress.
            #expect(try api.messages(to: Self.mobile).first { $0.channel == "sms" }?.text == "")
            #expect(try api.check(id, "zzzz").status == 400)
        }
    }

    @Test(
        "a retryable failure is retried with backoff, and a message left by a stopped server is delivered after restart",
        arguments: Backend.all)
    func retryAndRestart(backend: Backend) throws {
        try backend.withFreshDatabase { database, _ in
            var id = ""
            do {
                let server = try TestServer(database: database)
                server.sender.fail(with: DeliveryError(reason: "provider timeout", retryable: true))
                let api = try VerifyClient(server)
                id = try api.started(Self.mobile)
                server.tick()
                #expect(
                    try database.transaction {
                        try $0.queryOne("SELECT attempts FROM outbox WHERE ref LIKE 'verify:%'")?.int("attempts")
                    } == 1)
                #expect(try api.messages(to: Self.mobile).first?.status == "pending")
            }
            // A new process: the clock has moved past the backoff, the provider works again.
            let server = try TestServer(database: database)
            server.tick()
            #expect(server.sender.sent.isEmpty)  // not before its backoff
            server.clock.advance(5)
            server.tick()
            #expect(server.sender.sent.count == 1)
            #expect(server.sender.sent.first?.text.contains("Acme") == true)
            #expect(!id.isEmpty)
        }
    }

    @Test("a message written by a transaction that rolls back is never sent", arguments: Backend.all)
    func rollbackSendsNothing(backend: Backend) throws {
        try backend.withServer { server throws in
            struct Abort: Error {}
            #expect(throws: Abort.self) {
                try server.database.transaction { db in
                    try Outbox(random: SecureRandom.source).enqueue(
                        channel: .sms, to: Self.mobile, text: "never", now: server.nowMillis, on: db)
                    throw Abort()
                }
            }
            server.tick()
            #expect(try VerifyClient(server).messages(to: Self.mobile).isEmpty)
            #expect(server.sender.sent.isEmpty)
        }
    }

    @Test("the dev phone shows SMS and calls per number, escaped, and exists only in dev mode")
    func devPhone() throws {
        try Backend.all[0].withServer { server throws in
            let api = try VerifyClient(server)
            _ = try api.started(Self.mobile, extra: ["brand": "<b>Acme & Co"])
            let page = try server.get("/dev/phone")
            #expect(page.status == 200)
            #expect(page.header("content-type")?.hasPrefix("text/html") == true)
            #expect(page.text.contains("+447400123456"))
            #expect(page.text.contains("&lt;b&gt;Acme &amp; Co: your verification code is"))
            #expect(!page.text.contains("<b>Acme"))
            #expect(page.text.contains("http-equiv=\"refresh\""))
            #expect(!page.text.contains("Play the call"), "an SMS has nothing to play")
        }
        try Backend.all[0].withServer { server throws in
            let api = try VerifyClient(server)
            let id = try api.started(Self.mobile, channels: ["voice"], extra: ["locale": "de-de"])
            server.tick()
            let call = try #require(try server.outbox(to: Self.mobile).first { $0.channel == "voice" })
            #expect(call.text.contains("Bestätigungscode"), "\(call.text)")
            #expect(try server.get("/dev/phone").text.contains("href=\"/dev/phone/calls/\(call.id).wav\""))
            let wav = try server.get("/dev/phone/calls/\(call.id).wav")
            #expect(wav.status == 200 && wav.header("content-type") == "audio/wav")
            // A RIFF/WAVE file of PCM sound long enough to say the code twice (over two seconds at espeak-ng's 22,050 Hz, 16 bits).
            #expect(Array(wav.body.prefix(4)) == Array("RIFF".utf8) && Array(wav.body[8..<12]) == Array("WAVE".utf8))
            #expect(wav.body.count > 2 * 22_050 * 2, "\(wav.body.count) bytes")
            #expect(try server.get("/dev/phone/calls/\(id).wav").status == 404)
            #expect(try server.get("/dev/phone/calls/\(call.id).mp3").status == 404)
        }
        try Backend.all[0].withServer(TestServer.configuration { $0.dev = false }) { server throws in
            #expect(try server.get("/dev/phone").status == 404)
        }
    }
}
