import API
import Core
import Crypto
import Foundation
import ServerTestSupport
import Store
import Synchronization
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

@Suite("Sessions and sign-in")
struct SessionsTests {
    @Test(
        "sign-in returns a token shown once and an AAL1 session; GET and DELETE use it",
        arguments: Backend.all, Transport.allCases)
    func lifecycle(backend: Backend, transport: Transport) throws {
        try backend.withServer(transport: transport) { server throws in
            _ = try server.json(
                "POST", "/v1/accounts", ["email": "s@example.com", "password": "correct horse battery"])
            let created = try server.json(
                "POST", "/v1/sessions", ["email": "S@EXAMPLE.com".lowercased(), "password": "correct horse battery"])
            #expect(created.status == 201)
            let createdBody = try created.decode(SessionCreated.self)
            let token = createdBody.token
            #expect(token.count == 43)
            let session = createdBody.session
            #expect(session.aal == 1)
            #expect(session.methods == ["pwd"])
            // Only the token's SHA-256 is stored.
            let stored = try server.database.transaction { try $0.query("SELECT token_hash FROM sessions", []) }.map {
                try $0.text("token_hash")
            }
            #expect(stored == [SHA256.hex(token)])

            let current = try server.get("/v1/session", token: token)
            #expect(current.status == 200)
            let currentBody = try current.decode(CurrentSession.self)
            #expect(currentBody.user.email == "s@example.com")
            #expect(!currentBody.user.emailVerified)
            #expect(currentBody.session.id == session.id)

            let ended = try server.send("DELETE", "/v1/session", headers: ["Authorization": "Bearer \(token)"])
            #expect(ended.status == 204)
            let after = try server.get("/v1/session", token: token)
            #expect(after.status == 401)
            #expect(try after.problem.code == "unauthenticated")
            #expect(try server.auditKinds().suffix(2) == ["signin.succeeded", "session.ended"])
        }
    }

    @Test("a wrong password and an unknown email get the same 401")
    func sameFailure() throws {
        try Backend.all[0].withServer { server throws in
            _ = try server.json(
                "POST", "/v1/accounts", ["email": "t@example.com", "password": "correct horse battery"])
            let wrong = try server.json(
                "POST", "/v1/sessions", ["email": "t@example.com", "password": "not the password"])
            let unknown = try server.json(
                "POST", "/v1/sessions", ["email": "nobody@example.com", "password": "not the password"])
            #expect(wrong.status == 401 && unknown.status == 401)
            var a = try wrong.problem
            var b = try unknown.problem
            a.requestID = nil
            b.requestID = nil
            #expect(a == b)
            #expect(a.code == "invalid_credentials")
        }
    }

    @Test("missing, malformed and unknown tokens get 401 unauthenticated")
    func badTokens() throws {
        try Backend.all[0].withServer { server throws in
            for token in [nil, "junk", String(repeating: "A", count: 43)] {
                let r = try server.get("/v1/session", token: token)
                #expect(r.status == 401)
                #expect(try r.problem.code == "unauthenticated")
                #expect(r.header("www-authenticate")?.hasPrefix("Bearer") == true)
            }
        }
    }

    @Test("a session expires after the idle timeout, and use renews it", arguments: Backend.all)
    func idleTimeout(backend: Backend) throws {
        try backend.withServer { server throws in
            let token = try #require(try server.signUp("i@example.com"))
            server.clock.advance(20 * 60)
            #expect(try server.get("/v1/session", token: token).status == 200)
            server.clock.advance(20 * 60)
            #expect(try server.get("/v1/session", token: token).status == 200)
            server.clock.advance(30 * 60 + 1)
            let expired = try server.get("/v1/session", token: token)
            #expect(expired.status == 401)
            #expect(try expired.problem.code == "session_expired")
            #expect(try server.get("/v1/session", token: token).problem.code == "session_expired")
            #expect(try server.auditKinds().filter { $0 == "session.expired" }.count == 1)
        }
    }

    @Test("a session ends at its absolute lifetime however much it is used")
    func absoluteLifetime() throws {
        try Backend.all[0].withServer { server throws in
            let token = try #require(try server.signUp("j@example.com"))
            for _ in 0..<24 {
                server.clock.advance(29 * 60)
                _ = try server.get("/v1/session", token: token)
            }
            // 11 h 36 min so far: still alive; past 12 h it is over.
            #expect(try server.get("/v1/session", token: token).status == 200)
            server.clock.advance(25 * 60)
            #expect(try server.get("/v1/session", token: token).problem.code == "session_expired")
        }
    }

    @Test(
        "after five failures the account locks with a growing delay, the right password included; a success resets",
        arguments: Backend.all)
    func lockout(backend: Backend) throws {
        try backend.withServer { server throws in
            _ = try server.json(
                "POST", "/v1/accounts", ["email": "k@example.com", "password": "correct horse battery"])
            func attempt(_ password: String) throws -> HTTPTestClient.Response {
                try server.json("POST", "/v1/sessions", ["email": "k@example.com", "password": password])
            }
            for _ in 0..<5 { #expect(try attempt("wrong password").status == 401) }
            let locked = try attempt("correct horse battery")
            #expect(locked.status == 429)
            #expect(try locked.problem.code == "too_many_attempts")
            #expect(locked.header("retry-after") == "5")
            server.clock.advance(5)
            #expect(try attempt("wrong password").status == 401)  // the 6th failure: 10 s now
            #expect(try attempt("correct horse battery").header("retry-after") == "10")
            server.clock.advance(10)
            #expect(try attempt("correct horse battery").status == 201)
            // The count was reset: five more failures are allowed before a lock.
            for _ in 0..<4 { #expect(try attempt("wrong password").status == 401) }
            #expect(try attempt("correct horse battery").status == 201)
            #expect(try server.auditKinds().contains("signin.locked"))
        }
    }

    @Test("lockouts are capped at 15 minutes")
    func lockoutCap() throws {
        try Backend.all[0].withServer { server throws in
            for _ in 0..<20 {
                _ = try server.json("POST", "/v1/sessions", ["email": "nobody@example.com", "password": "guess"])
                server.clock.advance(901)
            }
            _ = try server.json("POST", "/v1/sessions", ["email": "nobody@example.com", "password": "guess"])
            let r = try server.json("POST", "/v1/sessions", ["email": "nobody@example.com", "password": "guess"])
            #expect(r.status == 429)
            #expect(r.header("retry-after") == "900")
        }
    }

    @Test("parallel wrong guesses cannot get more than the free attempts", arguments: Backend.all)
    func parallelGuesses(backend: Backend) throws {
        try backend.withServer { server throws in
            _ = try server.json(
                "POST", "/v1/accounts", ["email": "p@example.com", "password": "correct horse battery"])
            let port = server.port
            let statuses = Mutex<[Int]>([])
            runThreads(16) { i in
                let status =
                    (try? HTTPTestClient(port: port).json(
                        "POST", "/v1/sessions", ["email": "p@example.com", "password": "guess \(i)"]
                    ).status) ?? 0
                statuses.withLock { $0.append(status) }
            }
            let all = statuses.withLock { $0 }
            #expect(all.filter { $0 == 401 }.count == 5)
            #expect(all.filter { $0 == 429 }.count == 11)
        }
    }

    @Test("sign-in attempts are rate limited per client IP")
    func ipLimit() throws {
        let config = TestServer.configuration {
            $0.signInPerIPBurst = 3
            $0.signInPerIPRate = 0.1
        }
        try Backend.all[0].withServer(config) { server throws in
            let statuses = try (0..<4).map {
                try server.json("POST", "/v1/sessions", ["email": "ip\($0)@example.com", "password": "guess"]).status
            }
            #expect(statuses == [401, 401, 401, 429])
            server.clock.advance(10)
            #expect(
                try server.json("POST", "/v1/sessions", ["email": "ip9@example.com", "password": "guess"]).status == 401
            )
        }
    }

    @Test("a hash made with weaker parameters is upgraded at the next successful sign-in", arguments: Backend.all)
    func rehash(backend: Backend) throws {
        try backend.withFreshDatabase { database, _ in
            do {
                let weak = TestServer.configuration { $0.argon2OpsLimit = 1 }
                let server = try TestServer(database: database, configuration: weak)
                _ = try server.json(
                    "POST", "/v1/accounts", ["email": "w@example.com", "password": "correct horse battery"])
            }
            let strong = TestServer.configuration { $0.argon2OpsLimit = 2 }
            let server = try TestServer(database: database, configuration: strong)
            func hash() throws -> String {
                try server.database.transaction {
                    try AccountRepository.find(email: "w@example.com", on: $0)!.passwordHash
                }
            }
            #expect(try hash().contains("t=1"))
            #expect(
                try server.json(
                    "POST", "/v1/sessions", ["email": "w@example.com", "password": "correct horse battery"]
                ).status == 201)
            #expect(try hash().contains("t=2"))
            #expect(try server.auditKinds().contains("password.rehashed"))
            #expect(
                try server.json(
                    "POST", "/v1/sessions", ["email": "w@example.com", "password": "correct horse battery"]
                ).status == 201)
        }
    }

    @Test("the log never holds a password or a token")
    func noSecretsInLog() throws {
        try Backend.all[0].withServer(TestServer.configuration { $0.dev = false }) { server throws in
            let token = try #require(
                try server.signUp("l@example.com", password: "unusual secret phrase", verify: false))
            _ = try server.get("/v1/session", token: token)
            // A request's line is written once it is fully sent, which may trail the client's read.
            #expect(eventually { server.log.all.contains { $0.contains("\"path\":\"/v1/session\"") } })
            let log = server.log.all.joined(separator: "\n")
            #expect(!log.contains("unusual secret phrase"))
            #expect(!log.contains(token))
            #expect(log.contains("\"path\":\"/v1/sessions\""))
        }
    }
}

@Suite("Housekeeping")
struct HousekeepingTests {
    @Test("stale limiter rows, old codes and long-ended sessions are purged; live ones stay", arguments: Backend.all)
    func purge(backend: Backend) throws {
        try backend.withServer { server throws in
            let token = try #require(try server.signUp("hk@example.com"))
            _ = try server.json(
                "POST", "/v1/accounts", ["email": "hk2@example.com", "password": "correct horse battery"])
            _ = try server.json("POST", "/v1/sessions", ["email": "nobody@example.com", "password": "guess"])
            _ = try server.send("DELETE", "/v1/session", headers: ["Authorization": "Bearer \(token)"])
            func counts() throws -> [Int64] {
                try server.database.transaction { db in
                    try ["rate_limits", "login_throttle", "email_codes", "sessions"].map {
                        try db.queryOne("SELECT COUNT(*) AS n FROM \($0)")!.int("n")
                    }
                }
            }
            let before = try counts()
            #expect(before.allSatisfy { $0 > 0 })
            // Nothing is stale yet.
            let now = server.nowMillis
            #expect(
                try server.database.transaction { try Housekeeping.purge(now: now, on: $0) } == Housekeeping.Report())
            let later = now + 31 * Housekeeping.day
            let dialect = server.database.dialect
            if dialect == .postgres {
                // While another instance purges (it holds the advisory lock), this one skips its pass.
                let holding = DispatchSemaphore(value: 0)
                let done = DispatchSemaphore(value: 0)
                let released = DispatchSemaphore(value: 0)
                let database = server.database
                Thread.detachNewThread {
                    _ = try? database.transaction { db in
                        _ = try db.query("SELECT pg_advisory_xact_lock($1)", [.int(Housekeeping.lockKey)])
                        holding.signal()
                        done.wait()
                    }
                    released.signal()
                }
                holding.wait()
                #expect(
                    try server.database.transaction { try Housekeeping.purge(now: later, dialect: dialect, on: $0) }
                        == nil)
                done.signal()
                released.wait()  // the other instance's transaction has ended, and its lock with it
                #expect(try counts() == before)
            }
            #expect(
                try server.database.transaction { try Housekeeping.purge(now: later, dialect: dialect, on: $0) } != nil)
            #expect(try counts() == [0, 0, 0, 0])
        }
    }

    @Test(
        "an account's count of wrong second-factor proofs outlives the purge: one wrong proof a day still reaches the freeze, which stays",
        arguments: Backend.all)
    func slowGuesser(backend: Backend) throws {
        try backend.withServer { server throws in
            let user = try MFAClient(server, email: "slow@example.com")
            let totp = try user.enrollTOTP()
            let id = try server.database.transaction {
                try AccountRepository.find(email: "slow@example.com", on: $0)!.id
            }
            func wrongProof() throws -> HTTPTestClient.Response {
                let right = user.totp(totp.secret)
                let pending = try user.passwordSignIn().decode(MFARequired.self).pendingCredential
                return try server.json(
                    "POST", "/v1/sessions/mfa",
                    [
                        "pending_credential": pending, "enrollment_id": totp.id,
                        "code": right == "000000" ? "111111" : "000000",
                    ])
            }
            func dayLaterPurge() throws {
                server.clock.advance(Double(Housekeeping.day / 1000) + 60)
                _ = try server.database.transaction {
                    try Housekeeping.purge(now: server.nowMillis, dialect: server.database.dialect, on: $0)
                }
            }
            func failures() throws -> Int64? {
                try server.database.transaction {
                    try $0.queryOne(
                        "SELECT failures FROM login_throttle WHERE email_key = $1", [.text("mfa:\(id.raw)")])?.int(
                            "failures")
                }
            }
            #expect(try wrongProof().status == 400)
            // As if 97 more had come, one a day: the count stands at 98, its lock long passed.
            try server.database.transaction {
                _ = try $0.execute(
                    "UPDATE login_throttle SET failures = 98 WHERE email_key = $1", [.text("mfa:\(id.raw)")])
            }
            try dayLaterPurge()
            #expect(try failures() == 98, "a day-old count is not forgotten")
            #expect(try wrongProof().status == 400)
            try dayLaterPurge()
            let hundredth = try wrongProof()
            #expect(hundredth.status == 403)
            #expect(try hundredth.problem.code == "second_factor_frozen")
            // Frozen for good: no purge, however late, lifts it; the right code is refused.
            try dayLaterPurge()
            server.clock.advance(Double(31 * Housekeeping.day / 1000))
            _ = try server.database.transaction {
                try Housekeeping.purge(now: server.nowMillis, dialect: server.database.dialect, on: $0)
            }
            let pending = try user.passwordSignIn().decode(MFARequired.self).pendingCredential
            let refused = try server.json(
                "POST", "/v1/sessions/mfa",
                ["pending_credential": pending, "enrollment_id": totp.id, "code": user.totp(totp.secret)])
            #expect(try refused.problem.code == "second_factor_frozen")
        }
    }
}

@Suite("Bearer tokens")
struct BearerTokenTests {
    @Test("the token is read whatever the spacing and the scheme's case")
    func spacing() throws {
        try Backend.all[0].withServer { server throws in
            let token = try #require(try server.signUp("spaces@example.com"))
            for header in ["Bearer \(token)", "bearer \(token)", "Bearer   \(token)  ", "BEARER\t\(token)"] {
                let r = try server.send("GET", "/v1/session", headers: ["Authorization": header])
                #expect(r.status == (header.hasPrefix("BEARER\t") ? 401 : 200), "\(header.prefix(9))")
            }
        }
    }
}
