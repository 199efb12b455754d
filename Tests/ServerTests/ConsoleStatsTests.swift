import API
import Core
import Foundation
import Messaging
import ServerTestSupport
import Store
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

/// The console's numbers, made by the real services (and, for exact instants, the real audit log) on SQLite and
/// PostgreSQL, checked against what was done.
@Suite("ConsoleStats")
struct ConsoleStatsTests {
    static let hour: Int64 = 3_600_000
    static let day: Int64 = 86_400_000

    /// Signs in with the password, then proves the second factor with each code of `codes` in turn.
    static func secondStep(_ user: MFAClient, _ factor: String, codes: [String]) throws -> [Int] {
        let pending = try user.passwordSignIn().decode(MFARequired.self).pendingCredential
        return try codes.map {
            try user.server.json(
                "POST", "/v1/sessions/mfa", ["pending_credential": pending, "enrollment_id": factor, "code": $0]
            ).status
        }
    }

    @Test(
        "sign-ins and lockouts per hour and per day: a session counts once however many factors it took, buckets end on the hour, empty ones are zeros",
        arguments: Backend.all)
    func signInsAndLockouts(backend: Backend) throws {
        let configuration = TestServer.configuration {
            $0.lockout = LockoutPolicy(freeAttempts: 2, baseDelay: 600)
            $0.mfaLockout = LockoutPolicy(freeAttempts: 2, baseDelay: 600)
        }
        try backend.withServer(configuration) { server in
            let h0 = server.nowMillis
            try #require(h0 % Self.hour == 0, "the test clock starts on the hour")
            // Hour 0: three sign-ups that sign in (password only), then two with a second factor.
            try server.signUp("ann@example.com")
            let bob = try MFAClient(server, email: "bob@example.com")
            let carl = try MFAClient(server, email: "carl@example.com")
            let bobTOTP = try bob.enrollTOTP()
            let carlTOTP = try carl.enrollTOTP()
            // Bob: right password (a pending sign-in, not yet a sign-in), a wrong code, the right one: one sign-in.
            let bobStatuses = try Self.secondStep(
                bob, bobTOTP.id, codes: [bob.totp(bobTOTP.secret, offset: 9), bob.totp(bobTOTP.secret, offset: 1)])
            #expect(bobStatuses.first != 201 && bobStatuses.last == 201, "\(bobStatuses)")
            // Carl: two wrong codes lock his second step; the third attempt is refused unseen.
            let wrong = carl.totp(carlTOTP.secret, offset: 9)
            let carlStatuses = try Self.secondStep(carl, carlTOTP.id, codes: [wrong, wrong, wrong])
            #expect(carlStatuses.prefix(2).allSatisfy { ![201, 429].contains($0) } && carlStatuses.last == 429)
            // Hour 1: Ann's password twice wrong locks it; the next attempt is refused unseen.
            server.clock.advance(3600)
            for password in ["wrong one", "wrong two", "correct horse battery"] {
                _ = try server.json("POST", "/v1/sessions", ["email": "ann@example.com", "password": password])
            }
            #expect(try server.auditKinds().filter { $0 == "signin.locked" }.count == 1)
            #expect(try server.auditDetails("signin.succeeded").contains("password ok, second factor required"))
            // Exact instants through the audit log: the last millisecond of hour 1, the first of hour 2, one
            // just before the 24 hours, one after `now`; a frozen second step in hour 1.
            let h2 = h0 + 2 * Self.hour
            let now = h2 + Self.hour / 2
            let daySince = h2 - 23 * Self.hour
            try server.database.transaction { db in
                for at in [h2 - 1, h2, daySince - 1, now + 1] {
                    try AuditLog.append(AuditEvent(kind: .signInFailed, outcome: .failure), at: at, on: db)
                }
                try AuditLog.append(AuditEvent(kind: .mfaFrozen, outcome: .denied), at: h0 + Self.hour, on: db)
            }

            let hourly = try server.database.read { try ConsoleStats.signIns(.day, now: now, on: $0) }
            #expect(hourly.map(\.start) == (0..<24).map { daySince + Int64($0) * Self.hour })
            #expect(hourly.prefix(21).allSatisfy { $0 == ConsoleStats.SignIns(start: $0.start) })
            #expect(hourly[21] == ConsoleStats.SignIns(start: h0, succeeded: 4, secondFactorFailed: 3))
            #expect(hourly[22] == ConsoleStats.SignIns(start: h0 + Self.hour, failed: 3, locked: 1))
            #expect(hourly[23] == ConsoleStats.SignIns(start: h2, failed: 1))

            let daily = try server.database.read { try ConsoleStats.signIns(.week, now: now, on: $0) }
            let today = now / Self.day * Self.day
            #expect(daily.map(\.start) == (0..<7).map { today - Int64(6 - $0) * Self.day })
            #expect(daily.prefix(5).allSatisfy { $0 == ConsoleStats.SignIns(start: $0.start) })
            #expect(daily[5] == ConsoleStats.SignIns(start: today - Self.day, failed: 1))
            #expect(
                daily[6]
                    == ConsoleStats.SignIns(start: today, succeeded: 4, failed: 4, locked: 1, secondFactorFailed: 3))

            let lockouts = try server.database.read { try ConsoleStats.lockouts(.day, now: now, on: $0) }
            #expect(lockouts[21] == ConsoleStats.Lockouts(start: h0, secondFactor: 1))
            #expect(lockouts[22] == ConsoleStats.Lockouts(start: h0 + Self.hour, password: 1, frozen: 1))
            #expect(
                lockouts.enumerated().allSatisfy {
                    [21, 22].contains($0.offset) || $0.element == ConsoleStats.Lockouts(start: $0.element.start)
                })
            let weekLockouts = try server.database.read { try ConsoleStats.lockouts(.week, now: now, on: $0) }
            #expect(weekLockouts.last == ConsoleStats.Lockouts(start: today, password: 1, secondFactor: 1, frozen: 1))

            // The same numbers straight from the rows: every sign-in audit row of the window is accounted for.
            let rows = try server.database.read { try AuditLog.tail(limit: 1000, on: $0) }
                .filter { $0.at.millis >= daySince && $0.at.millis <= now }
            #expect(hourly.map(\.failed).reduce(0, +) == rows.filter { $0.kind == "signin.failed" }.count)
            #expect(
                hourly.map(\.succeeded).reduce(0, +)
                    == rows.filter { $0.kind == "signin.succeeded" && $0.detail?.hasPrefix("aal=") == true }.count)
        }
    }

    @Test(
        "second-factor methods in use: enrolled factors and their users per kind, every kind listed",
        arguments: Backend.all)
    func methods(backend: Backend) throws {
        try backend.withServer { server in
            let ann = try MFAClient(server, email: "ann@example.com")
            let annTOTP = try ann.enrollTOTP()
            try ann.stepUp(annTOTP)
            _ = try ann.enrollPhone("+447400123456")
            let bob = try MFAClient(server, email: "bob@example.com")
            _ = try bob.enrollTOTP()
            let methods = try server.database.read { try ConsoleStats.methods(on: $0) }
            #expect(methods.map(\.kind) == Factor.Kind.allCases)
            let byKind = Dictionary(uniqueKeysWithValues: methods.map { ($0.kind, $0) })
            #expect(byKind[.totp] == ConsoleStats.Methods(kind: .totp, factors: 2, users: 2))
            #expect(byKind[.phone] == ConsoleStats.Methods(kind: .phone, factors: 1, users: 1))
            #expect(byKind[.passkey] == ConsoleStats.Methods(kind: .passkey, factors: 0, users: 0))
            #expect(byKind[.device] == ConsoleStats.Methods(kind: .device, factors: 0, users: 0))
            let rows = try server.database.read {
                try $0.query("SELECT kind FROM mfa_factors").map { try $0.text("kind") }
            }
            #expect(methods.map(\.factors).reduce(0, +) == rows.count)
        }
    }

    @Test(
        "phone verifications per country over the guard's window: the rate and threshold the guard uses, and its verdict",
        arguments: Backend.all)
    func conversion(backend: Backend) throws {
        let configuration = TestServer.configuration {
            $0.verify.conversion = .init(minimumRate: 0.5, minimumVolume: 4, windowHours: 24)
        }
        try backend.withServer(configuration) { server in
            let settings = server.services.configuration.verify.conversion
            let api = try VerifyClient(server)
            let numbers = ["447400123451", "447400123452", "447400123453", "447400123454"]
            let ids = try numbers.map { try api.started($0) }
            _ = try api.started("4915112345678")
            server.tick()
            #expect(try api.check(ids[0], try #require(try api.smsCode(to: numbers[0]))).status == 200)
            func read(_ now: Int64) throws -> ConsoleStats.Conversion {
                try server.database.read { try ConsoleStats.conversion(settings, now: now, on: $0) }
            }
            let low = try read(server.nowMillis)
            #expect(low.minimumRate == 0.5 && low.minimumVolume == 4 && low.windowHours == 24)
            #expect(
                low.countries == [
                    .init(country: 44, started: 4, completed: 1, tripped: true),
                    .init(country: 49, started: 1, completed: 0, tripped: false),
                ])
            #expect(low.countries.map(\.rate) == [0.25, 0])
            // The guard agrees: a fifth code to the UK is refused while the console says tripped.
            #expect(try api.start("447400123455").status == 429)
            #expect(try api.check(ids[1], try #require(try api.smsCode(to: numbers[1]))).status == 200)
            let recovered = try read(server.nowMillis)
            #expect(recovered.countries.first == .init(country: 44, started: 4, completed: 2, tripped: false))
            #expect(recovered.countries.first?.rate == 0.5)
            #expect(try api.start("447400123455").status == 202)
            // A day and an hour later the window holds none of it.
            #expect(try read(server.nowMillis + 25 * Self.hour).countries.isEmpty)
        }
    }

    @Test(
        "deliveries by provider and outcome: taken, reported undeliverable by a receipt, failed for good, still waiting",
        arguments: Backend.all)
    func deliveries(backend: Backend) throws {
        try backend.withServer { server in
            let api = try VerifyClient(server)
            for number in ["447400123451", "447400123452", "447400123453"] { _ = try api.started(number) }
            server.tick()
            let sent = server.sender.sent
            try #require(sent.count == 3)
            try server.database.transaction {
                _ = try Outbox.recordReceipt(
                    provider: "test", reference: sent[0].id, status: "undelivered", now: server.nowMillis, on: $0)
                _ = try Outbox.recordReceipt(
                    provider: "test", reference: sent[1].id, status: "delivered", now: server.nowMillis, on: $0)
            }
            server.sender.fail(with: DeliveryError(reason: "refused", retryable: false))
            _ = try api.started("447400123454")
            server.tick()
            server.sender.fail(with: nil)
            _ = try api.started("447400123455")  // not yet handed to anyone
            let now = server.nowMillis
            let found = try server.database.read { try ConsoleStats.deliveries(.week, now: now, on: $0) }
            func counts(_ values: [ConsoleStats.DeliveryOutcome: Int]) -> [ConsoleStats.DeliveryOutcome: Int] {
                var all = values
                for outcome in ConsoleStats.DeliveryOutcome.allCases { all[outcome] = values[outcome] ?? 0 }
                return all
            }
            #expect(
                found == [
                    .init(provider: "test", channel: "sms", counts: counts([.sent: 2, .undelivered: 1])),
                    .init(provider: nil, channel: "sms", counts: counts([.failed: 1, .waiting: 1])),
                ])
            // Two days on, the last 24 hours hold none of them.
            #expect(
                try server.database.read { try ConsoleStats.deliveries(.day, now: now + 2 * Self.day, on: $0) }.isEmpty)
        }
    }

    @Test(
        "webhook deliveries failing: one refused for good, one waiting to be retried, per endpoint, the failing endpoint first",
        arguments: Backend.all)
    func webhooks(backend: Backend) throws {
        let receiver = WebhooksTests.Receiver()
        try WebhooksTests.server(backend, receiver) { server in
            let key = try WebhooksTests.writeKey(server)
            let (healthy, _) = try WebhooksTests.register(server, key: key, types: ["admin_key.created"])
            let (failing, _) = try WebhooksTests.register(server, key: key, types: ["user.created", "user.signed_in"])
            receiver.fail([410, 503])
            try server.signUp("wes@example.com")
            server.tick()
            server.tick()
            #expect(receiver.types == ["user.created", "user.signed_in"])
            let now = server.nowMillis
            let health = try server.database.read { try ConsoleStats.webhooks(.week, now: now, on: $0) }
            #expect(health.map(\.endpointID) == [failing, healthy])
            #expect(health.first?.retrying == 1 && health.first?.failed == 1 && health.first?.enabled == true)
            #expect(health.first?.failingSince != nil)
            #expect(health.last?.retrying == 0 && health.last?.failed == 0 && health.last?.failingSince == nil)
            let rows = try server.database.read {
                try $0.query("SELECT status, attempts FROM webhook_deliveries WHERE endpoint_id = $1", [.text(failing)])
                    .map { (try $0.text("status"), try $0.int("attempts")) }
            }
            #expect(rows.filter { $0.0 == "failed" }.count == 1)
            // Eight days on, the failure has left the window; the retry still waits.
            let later = try server.database.read { try ConsoleStats.webhooks(.week, now: now + 8 * Self.day, on: $0) }
            #expect(later.first?.failed == 0 && later.first?.retrying == 1)
        }
    }
}
