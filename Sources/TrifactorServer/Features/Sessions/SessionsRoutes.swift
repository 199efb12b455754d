import API
import Core
import Crypto
import Foundation
import HTTP
import Store

/// `POST /v1/sessions` (sign in), `GET /v1/session`, `DELETE /v1/session`.
struct SessionsRoutes {
    let env: Environment

    func register(on router: inout Router) {
        router.add("POST", "/v1/sessions", execution: .hashing) { try signIn($0) }
        // The session check of every page: from the session cache on the HTTP thread when it can be.
        router.add("GET", "/v1/session", fast: { request in
            SessionAuthenticator(env: env).cached(request).map { .json(CurrentSession(session: $0.session.info(env), user: $0.user.info)) }
        }) { try current($0) }
        router.add("DELETE", "/v1/session") { try signOut($0) }
    }

    private enum SignInOutcome {
        case session(token: String, SessionRecord)
        case secondFactor(MFARequired)
    }

    private enum Gate {
        case proceed(UserRecord?)
        case refused(APIError)
    }

    /// Sign-in with the first factor. The Argon2id check runs outside any
    /// transaction (it is slow by design); the attempt is counted before it
    /// and the outcome recorded after it, each in one transaction.
    func signIn(_ request: Request) throws -> Response {
        let body = try request.decode(CreateSessionRequest.self)
        guard let email = EmailAddress(body.email) else {
            throw APIError.invalidFields([.init(name: "email", reason: "is not a valid email address")])
        }
        guard !body.password.isEmpty, body.password.utf8.count <= 4096 else { throw APIError.invalidCredentials }
        let context = AuditContext(request)
        let throttle = LoginThrottle(policy: env.configuration.lockout)
        let ipLimit = env.configuration.signInPerIP

        let gate = try env.transaction { db -> Gate in
            let now = env.nowMillis
            if let wait = try RateLimiter.take("signin:ip:\(ClientKey.of(request))", limit: ipLimit, nowMillis: now, on: db) {
                try AuditLog.append(context.event(.signInRateLimited, .denied), at: now, on: db)
                return .refused(.rateLimited(retryAfter: wait))
            }
            let user = try AccountRepository.find(email: email.value, on: db)
            if case .locked(let wait) = try throttle.admit(email: email, nowMillis: now, on: db) {
                try AuditLog.append(context.event(.signInLocked, .denied, userID: user?.id), at: now, on: db)
                return .refused(.tooManyAttempts(retryAfter: wait))
            }
            return .proceed(user)
        }
        guard case .proceed(let user) = gate else {
            if case .refused(let error) = gate { throw error }
            throw APIError.invalidCredentials
        }

        let password = PasswordPolicy.normalize(body.password)
        let matches = env.hasher.verify(password, hash: user?.passwordHash ?? env.decoyHash) && user != nil
        guard let user, matches else {
            try env.audit(context.event(.signInFailed, .failure, userID: user?.id))
            throw APIError.invalidCredentials
        }
        let upgraded = env.hasher.needsRehash(user.passwordHash) ? try? env.hasher.hash(password) : nil

        let outcome = try env.transaction { db -> SignInOutcome in
            let now = env.nowMillis
            try throttle.reset(email: email, on: db)
            if let upgraded, try AccountRepository.replacePasswordHash(userID: user.id, old: user.passwordHash, new: upgraded, on: db) {
                try AuditLog.append(context.event(.passwordRehashed, .success, userID: user.id), at: now, on: db)
            }
            // A user with second factors gets a pending sign-in, never a session, from the password alone.
            let hints = try MFASignIn.hints(userID: user.id, on: db)
            if !hints.isEmpty {
                let token = SessionToken.generate(env.random)
                try MFARepository.insertPending(tokenHash: SHA256.hex(token), userID: user.id, now: now, on: db)
                try AuditLog.append(context.event(.signInSucceeded, .success, userID: user.id, detail: "password ok, second factor required"), at: now, on: db)
                return .secondFactor(MFARequired(pendingCredential: token, hints: hints))
            }
            let proofs = SessionIssuer.Proofs(aal: .aal1, methods: [AuthMethod.pwd.rawValue], passwordVerifiedAt: now, secondFactor: false)
            let issued = try SessionIssuer(env: env).issue(userID: user.id, proofs, context: context, detail: "", on: db)
            return .session(token: issued.token, issued.session)
        }
        switch outcome {
        case .session(let token, let session): return .json(SessionCreated(token: token, session: session.info(env)), status: 201)
        case .secondFactor(let required): return .json(required)
        }
    }

    func current(_ request: Request) throws -> Response {
        let auth = try SessionAuthenticator(env: env).authenticate(request).get()
        return .json(CurrentSession(session: auth.session.info(env), user: auth.user.info))
    }

    func signOut(_ request: Request) throws -> Response {
        let result = try env.transaction { db -> Result<SessionAuthenticator.Authenticated, APIError> in
            switch try SessionAuthenticator(env: env).authenticate(request, on: db) {
            case .failure(let error): return .failure(error)
            case .success(let auth):
                let now = env.nowMillis
                if try SessionRepository.end(id: auth.session.id, at: now, reason: "signed_out", on: db) {
                    try AuditLog.append(AuditContext(request).event(.sessionEnded, .success, userID: auth.user.id), at: now, on: db)
                }
                return .success(auth)
            }
        }
        let auth = try result.get()
        env.changes.publish("session:\(auth.session.id)")
        return .noContent
    }
}
