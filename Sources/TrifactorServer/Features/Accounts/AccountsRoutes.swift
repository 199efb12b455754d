import API
import Core
import Crypto
import Foundation
import Messaging
import HTTP
import Store

/// `POST /v1/accounts`, `POST /v1/accounts/verify-email`, `POST /v1/accounts/verify-email/resend`.
struct AccountsRoutes {
    let env: Environment

    func register(on router: inout Router) {
        router.add("POST", "/v1/accounts", execution: .hashing) { try signUp($0) }
        router.add("POST", "/v1/accounts/verify-email") { try verifyEmail($0) }
        router.add("POST", "/v1/accounts/verify-email/resend") { try resend($0) }
    }

    /// Same answer whether or not the email is registered: a known address
    /// gets a warning message instead, and nothing else changes.
    func signUp(_ request: Request) throws -> Response {
        let body = try request.decode(CreateAccountRequest.self)
        var invalid: [Problem.InvalidParameter] = []
        let email = EmailAddress(body.email)
        if email == nil { invalid.append(.init(name: "email", reason: "is not a valid email address")) }
        if let violation = env.passwordPolicy.violation(body.password, email: email) {
            invalid.append(.init(name: "password", reason: env.passwordPolicy.explain(violation)))
        }
        let displayName = body.displayName?.trimmingCharacters(in: .whitespacesAndNewlines)
        if let displayName, displayName.count > 100 || displayName.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            invalid.append(.init(name: "display_name", reason: "must be at most 100 characters, without control characters"))
        }
        guard invalid.isEmpty, let email else { throw APIError.invalidFields(invalid) }

        let limit = RateLimiter.Limit(burst: env.configuration.signUpPerIPBurst, rate: env.configuration.signUpPerIPRate)
        if let wait = try env.transaction({ try RateLimiter.take("signup:ip:\(ClientKey.of(request))", limit: limit, nowMillis: env.nowMillis, on: $0) }) {
            throw APIError.rateLimited(retryAfter: wait)
        }
        // Hash before looking, so a known email costs the same time as a new one.
        let hash = try env.hasher.hash(PasswordPolicy.normalize(body.password))
        let context = AuditContext(request)
        do {
            try env.transaction { db in
                let now = env.nowMillis
                if let existing = try AccountRepository.find(email: email.value, on: db) {
                    try Outbox(env: env).enqueue(channel: .email, to: existing.email, text: """
                        Someone tried to create a Trifactor account with this email address. If it was you, sign in instead; \
                        otherwise you can ignore this message: nothing has changed.
                        """, on: db)
                    try AuditLog.append(context.event(.signupForExistingEmail, .denied, userID: existing.id), at: now, on: db)
                    return
                }
                let user = UserRecord(id: env.newID(), email: email.value, displayName: displayName?.isEmpty == true ? nil : displayName,
                                      passwordHash: hash, emailVerifiedAt: nil, createdAt: now)
                try AccountRepository.insert(user, on: db)
                try EmailVerification(env: env).issue(for: user, on: db)
                try AuditLog.append(context.event(.accountCreated, .success, userID: user.id), at: now, on: db)
                try AuditLog.append(context.event(.emailVerificationSent, .success, userID: user.id), at: now, on: db)
            }
        } catch let error as StoreError where error.kind == .uniqueViolation {
            // A concurrent sign-up took the address first: the same answer as for a known email.
        }
        return .json(VerificationSent(), status: 202)
    }

    func verifyEmail(_ request: Request) throws -> Response {
        let body = try request.decode(VerifyEmailRequest.self)
        guard let email = EmailAddress(body.email) else {
            throw APIError.invalidFields([.init(name: "email", reason: "is not a valid email address")])
        }
        let code = body.code.trimmingCharacters(in: .whitespaces)
        let context = AuditContext(request)
        let limit = env.configuration.signInPerIP
        // The failure count must be committed even when the answer is an error.
        let outcome = try env.transaction { db -> (EmailVerification.Outcome, userID: String?) in
            if let wait = try RateLimiter.take("code:ip:\(ClientKey.of(request))", limit: limit, nowMillis: env.nowMillis, on: db) {
                return (.rateLimited(retryAfter: wait), nil)
            }
            guard let user = try AccountRepository.find(email: email.value, on: db) else {
                // An unknown address writes too, so both paths cost a commit alike.
                try AuditLog.append(context.event(.emailVerificationFailed, .failure, detail: "unknown address"), at: env.nowMillis, on: db)
                return (.unusable, nil)
            }
            let outcome = code.count == EmailVerification.codeLength && code.allSatisfy(\.isASCII) && code.allSatisfy(\.isNumber)
                ? try EmailVerification(env: env).check(code, for: user, on: db) : .wrong
            if outcome == .verified {
                try AuditLog.append(context.event(.emailVerified, .success, userID: user.id), at: env.nowMillis, on: db)
            } else {
                try AuditLog.append(context.event(.emailVerificationFailed, .failure, userID: user.id), at: env.nowMillis, on: db)
            }
            return (outcome, user.id)
        }
        switch outcome.0 {
        case .verified: env.changes.publish("user:\(outcome.userID ?? "")")
        case .rateLimited(let wait): throw APIError.rateLimited(retryAfter: wait)
        case .wrong, .unusable: throw APIError.invalidCode
        }
        return .json(EmailVerified())
    }

    /// Same answer for unknown, unverified and verified addresses.
    func resend(_ request: Request) throws -> Response {
        let body = try request.decode(ResendVerificationRequest.self)
        guard let email = EmailAddress(body.email) else {
            throw APIError.invalidFields([.init(name: "email", reason: "is not a valid email address")])
        }
        let limit = RateLimiter.Limit(burst: env.configuration.resendPerEmailBurst, rate: env.configuration.resendPerEmailRate)
        let context = AuditContext(request)
        let ipLimit = RateLimiter.Limit(burst: env.configuration.signUpPerIPBurst, rate: env.configuration.signUpPerIPRate)
        let wait = try env.transaction { db -> Int? in
            if let wait = try RateLimiter.take("resend:ip:\(ClientKey.of(request))", limit: ipLimit, nowMillis: env.nowMillis, on: db) {
                return wait
            }
            if let wait = try RateLimiter.take("resend:email:\(SHA256.hex(email.value))", limit: limit, nowMillis: env.nowMillis, on: db) {
                return wait
            }
            if let user = try AccountRepository.find(email: email.value, on: db), user.emailVerifiedAt == nil {
                try EmailVerification(env: env).issue(for: user, on: db)
                try AuditLog.append(context.event(.emailVerificationSent, .success, userID: user.id), at: env.nowMillis, on: db)
            }
            return nil
        }
        if let wait { throw APIError.rateLimited(retryAfter: wait) }
        return .json(VerificationSent(), status: 202)
    }
}

/// Who made a request, as the audit log records it.
struct AuditContext {
    let ip: String
    let userAgent: String?

    init(_ request: Request) {
        ip = request.remoteAddress
        userAgent = request.header("user-agent")
    }

    func event(_ kind: AuditEventKind, _ outcome: AuditOutcome, userID: String? = nil, detail: String? = nil) -> AuditEvent {
        AuditEvent(kind: kind, outcome: outcome, userID: userID, ip: ip, userAgent: userAgent, detail: detail)
    }
}
