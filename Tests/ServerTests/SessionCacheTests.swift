import API
import Core
import Foundation
import ServerTestSupport
import Store
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

/// The session check answers from memory on the HTTP thread, and every
/// change that ends or alters a session reaches it at once.
@Suite("Session cache")
struct SessionCacheTests {
    @Test("a cached session answers with the database gone: no database I/O on the hot path")
    func noDatabaseOnHotPath() throws {
        try Backend.all[0].withServer { server in
            let token = try #require(try server.signUp("hot@example.com"))
            #expect(try server.get("/v1/session", token: token).status == 200)  // loads the cache
            server.database.close()
            let cached = try server.get("/v1/session", token: token)
            #expect(cached.status == 200)
            #expect(try cached.decode(CurrentSession.self).user.email == "hot@example.com")
            // Anything not cached still needs the database, and says so.
            #expect(try server.get("/v1/session", token: String(repeating: "A", count: 43)).status == 503)
        }
    }

    @Test(
        "an entry stored by another thread after the lookup read its clock is fresh, not an overflow (the bench crashed on it)"
    )
    func storedAfterTheClockWasRead() throws {
        let cache = SessionCache(lifetime: 1)
        let session = SessionRecord(
            id: SessionID("s"), userID: UserID("u"), aal: .aal1, methods: [.pwd], createdAt: 0, lastSeenAt: 0)
        let user = UserRecord(
            id: UserID("u"), email: "race@example.com", displayName: nil, passwordHash: "", emailVerifiedAt: nil,
            createdAt: 0)
        let before = DispatchTime.now().uptimeNanoseconds
        cache.store("abc0", session: session, user: user)
        #expect(cache.lookup("abc0", now: before)?.user.email == "race@example.com")
        // And it still ages out.
        #expect(cache.lookup("abc0", now: DispatchTime.now().uptimeNanoseconds + 2_000_000_000) == nil)
    }

    @Test("sign-out, revocation, step-up and a removed factor reach the cached session at once", arguments: Backend.all)
    func invalidation(backend: Backend) throws {
        try backend.withServer { server in
            let user = try MFAClient(server, email: "cache@example.com")
            #expect(try server.get("/v1/session", token: user.token).status == 200)
            let totp = try user.enrollTOTP()
            // The step-up raises the cached session to AAL2 at once.
            #expect(try server.get("/v1/session", token: user.token).decode(CurrentSession.self).session.aal == 1)
            try user.stepUp(totp)
            #expect(try server.get("/v1/session", token: user.token).decode(CurrentSession.self).session.aal == 2)

            // Another session revokes this one.
            let other = try server.json("POST", "/v1/sessions", ["email": user.email, "password": user.password])
                .decode(MFARequired.self).pendingCredential
            server.clock.advance(30)
            let second = try server.json(
                "POST", "/v1/sessions/mfa",
                ["pending_credential": other, "enrollment_id": totp.id, "code": user.totp(totp.secret)])
            let secondToken = try second.decode(SessionCreated.self).token
            #expect(try server.get("/v1/session", token: secondToken).status == 200)
            let id = try server.get("/v1/session", token: user.token).decode(CurrentSession.self).session.id
            #expect(try user.call("DELETE", "/v1/sessions/\(id)", token: secondToken).status == 204)
            #expect(try server.get("/v1/session", token: user.token).status == 401)

            // Signing out ends the other one at once too.
            #expect(try user.call("DELETE", "/v1/session", token: secondToken).status == 204)
            #expect(try server.get("/v1/session", token: secondToken).status == 401)
        }
    }

    @Test("uses seen in memory reach the database in the next batch, moving last-seen forward")
    func usesAreBatched() throws {
        try Backend.all[0].withServer { server in
            let token = try #require(try server.signUp("seen@example.com"))
            func lastSeen() throws -> Int64 {
                try server.database.read { try $0.queryOne("SELECT last_seen_at FROM sessions")!.int("last_seen_at") }
            }
            let before = try lastSeen()
            server.clock.advance(120)  // beyond the 1-minute slice in which a use is not written again
            #expect(try server.get("/v1/session", token: token).status == 200)
            #expect(try lastSeen() == before)  // written with the next batch, not in the request
            server.tick()
            #expect(try lastSeen() == before + 120_000)
        }
    }

    @Test(
        "a sign-out on one instance ends the session cached by another at once",
        .enabled(if: Backend.postgresURL != nil))
    func acrossInstances() throws {
        let backend = try #require(Backend.all.first { $0.dialect == .postgres })
        try backend.withTwoInstances { first, second in
            let token = try #require(try first.signUp("twice@example.com"))
            #expect(try first.get("/v1/session", token: token).status == 200)
            #expect(try second.get("/v1/session", token: token).status == 200)  // now cached on both
            #expect(
                try HTTPTestClient(port: second.port).request(
                    "DELETE", "/v1/session", headers: ["Authorization": "Bearer \(token)"]
                ).status == 204)
            let started = ContinuousClock.now
            #expect(try eventually(2) { try first.get("/v1/session", token: token).status == 401 })
            #expect(ContinuousClock.now - started < .milliseconds(900))
        }
    }
}
