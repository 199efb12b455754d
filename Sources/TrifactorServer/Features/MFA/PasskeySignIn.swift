import API
import Core
import Crypto
import Foundation
import HTTP
import Store
import WebAuthn

/// Passwordless sign-in with a discoverable passkey: options with an empty
/// allow list, then the assertion names its credential. User verification
/// is required, so the session is AAL2 (possession and user verification).
struct PasskeySignIn {
    let env: Environment

    func register(on router: inout Router) {
        router.add("POST", "/v1/sessions/passkey/options") { request in
            let challenge = Base64URL.encode(env.random.bytes(32))
            try env.transaction { db in
                let limit = env.configuration.signInPerIP
                if let wait = try RateLimiter.take("signin:ip:\(ClientKey.of(request))", limit: limit, nowMillis: env.nowMillis, on: db) {
                    throw APIError.rateLimited(retryAfter: wait)
                }
                try db.execute("INSERT INTO passkey_logins (challenge, created_at) VALUES ($1, $2)", [.text(challenge), .int(env.nowMillis)])
            }
            return .json(PasskeyOptions(options: RequestOptions(challenge: challenge, rpID: env.configuration.rpID, allow: [])))
        }
        router.add("POST", "/v1/sessions/passkey") { try signIn($0) }
    }

    func signIn(_ request: Request) throws -> Response {
        let body = try request.decode(PasskeySignInRequest.self)
        let context = AuditContext(request)
        let passkeys = PasskeyFactor(env: env)
        // Everything that needs no stored state is checked before the transaction opens.
        let parsed: ParsedAssertion
        do {
            parsed = try passkeys.parse(body.assertion)
        } catch {
            try env.audit(context.event(.signInFailed, .failure, detail: "passkey assertion refused: \(error.reason.rawValue)"))
            throw APIError.invalidCredentials
        }
        let issued = try env.transaction { db -> (token: String, session: SessionRecord)? in
            let now = env.nowMillis
            // The challenge must be one we issued, unused and fresh; it is spent either way.
            guard try db.execute("UPDATE passkey_logins SET used_at = $2 WHERE challenge = $1 AND used_at IS NULL AND created_at > $3",
                                 [.text(Base64URL.encode(parsed.challenge)), .int(now), .int(now - PasskeyFactor.challengeLifetime)]) == 1,
                  let factor = try FactorRepository.passkey(credentialID: body.assertion.id, on: db),
                  try passkeys.assert(parsed, factor: factor, challenge: parsed.challenge, context: context, on: db)
            else {
                try AuditLog.append(context.event(.signInFailed, .failure, detail: "passkey"), at: now, on: db)
                return nil
            }
            let proofs = SessionIssuer.Proofs(aal: .aal2, methods: ["hwk", "user"], passwordVerifiedAt: nil, secondFactor: true)
            return try SessionIssuer(env: env).issue(userID: factor.userID, proofs, context: context, detail: "passwordless passkey=\(factor.id)", on: db)
        }
        guard let issued else { throw APIError.invalidCredentials }
        return .json(SessionCreated(token: issued.token, session: issued.session.info(env)), status: 201)
    }
}
