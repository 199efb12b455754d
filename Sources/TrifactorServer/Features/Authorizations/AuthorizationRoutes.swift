import API
import Core
import Crypto
import Foundation
import HTTP
import Store

/// Bound actions (transaction signing, PSD2 dynamic linking): an action is
/// described first; the server keeps the SHA-256 of its canonical form and
/// sends a challenge that states it; a code for that authorization approves
/// that exact action once, within 5 minutes. Endpoints that move money call
/// `Authorizations.consume` with their own request's action.
struct AuthorizationRoutes {
    let env: Environment

    func register(on router: inout Router) {
        router.add("POST", "/v1/authorizations") { try create($0) }
        router.add("POST", "/v1/authorizations/:id") { try approve($0) }
    }

    func create(_ request: Request) throws -> Response {
        let auth = try SessionAuthenticator(env: env).authenticate(request).get()
        guard auth.user.emailVerifiedAt != nil else { throw APIError.unverifiedEmail }
        let body = try request.decode(CreateAuthorizationRequest.self)
        guard Authorizations.isValid(body.action) else {
            throw APIError.invalidFields([.init(name: "action", reason: "must be an object with a type and at most 20 fields named [a-z0-9_], with values of at most 200 characters and no control characters")])
        }
        let mfa = MFASignIn(env: env)
        let factor = try mfa.find(body.enrollmentID, userID: auth.user.id)
        let id = env.newID()
        let hash = Authorizations.canonicalHash(body.action)
        let summary = Authorizations.summary(body.action)
        try env.transaction { db in
            let now = env.nowMillis
            try db.execute("""
                INSERT INTO authorizations (id, user_id, factor_id, action_hash, summary, status, created_at, expires_at)
                VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7)
                """, [.text(id), .text(auth.user.id), .text(factor.id), .text(hash), .text(summary), .int(now), .int(now + Authorizations.lifetime)])
            try AuditLog.append(AuditContext(request).event(.authorizationCreated, .success, userID: auth.user.id, detail: "id=\(id) \(summary)"), at: now, on: db)
        }
        let challenge = try mfa.send(factor, purpose: Authorizations.purpose(id: id, hash: hash, summary: summary), userID: auth.user.id, request: request)
        var answer = AuthorizationCreated(authorizationID: id, summary: summary, challenge: challenge, actionHash: challenge.map { _ in hash })
        answer.options = mfa.challengeAnswer(factor, challenge: challenge, purpose: "authz").options
        return .json(answer, status: 202)
    }

    func approve(_ request: Request) throws -> Response {
        let auth = try SessionAuthenticator(env: env).authenticate(request).get()
        let body = try request.decode(ApproveAuthorizationRequest.self)
        let id = request.parameters["id"] ?? ""
        guard let row = try env.read({ db in
            try db.queryOne("SELECT factor_id, action_hash, summary FROM authorizations WHERE id = $1 AND user_id = $2 AND status = 'pending' AND expires_at > $3",
                            [.text(id), .text(auth.user.id), .int(env.nowMillis)])
        }) else { throw APIError.authorizationNotFound }
        let mfa = MFASignIn(env: env)
        let factor = try mfa.find(try row.text("factor_id"), userID: auth.user.id)
        let purpose = Authorizations.purpose(id: id, hash: try row.text("action_hash"), summary: try row.text("summary"))
        do {
            try mfa.prove(factor, proof: try Proof.from(code: body.code, credential: body.assertion), purpose: purpose, userID: auth.user.id, request: request)
        } catch let error as APIError where error == .invalidCode {
            try env.audit(AuditContext(request).event(.authorizationFailed, .failure, userID: auth.user.id, detail: "id=\(id)"))
            throw error
        }
        try env.transaction { db in
            guard try db.execute("UPDATE authorizations SET status = 'approved', approved_at = $2 WHERE id = $1 AND status = 'pending' AND expires_at > $2",
                                 [.text(id), .int(env.nowMillis)]) == 1 else { throw APIError.authorizationNotFound }
            try AuditLog.append(AuditContext(request).event(.authorizationApproved, .success, userID: auth.user.id, detail: "id=\(id)"), at: env.nowMillis, on: db)
        }
        return .json(AuthorizationStatus(status: "approved"))
    }
}

/// The rules of bound actions, shared by the routes and by the endpoints that consume them.
enum Authorizations {
    static let lifetime: Int64 = 5 * 60_000

    /// Field names are `[a-z0-9_]{1,40}`; string values have no control
    /// characters (they are read out in messages) and at most 200 characters.
    static func isValid(_ action: [String: JSONScalar]) -> Bool {
        guard case .string(let type)? = action["type"], !type.isEmpty, action.count <= 20 else { return false }
        return action.allSatisfy { key, value in
            (1...40).contains(key.count) && key.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
                && value.text.count <= 200 && !value.text.unicodeScalars.contains { $0.properties.generalCategory == .control }
        }
    }

    /// SHA-256 over an unambiguous canonical form: fields sorted by name,
    /// each as length-prefixed name, a type tag, and length-prefixed value,
    /// so no two different actions (nor "250" and 250) share a form.
    static func canonicalHash(_ action: [String: JSONScalar]) -> String {
        var form = ""
        for key in action.keys.sorted() {
            let value = action[key]!
            let tag = switch value {
            case .string: "s"
            case .number: "n"
            case .bool: "b"
            }
            form += "\(key.utf8.count):\(key)\(tag)\(value.text.utf8.count):\(value.text);"
        }
        return SHA256.hex(form)
    }

    /// "Confirm transfer of EUR 250.00 to Alice Example", or "Confirm <type>".
    static func summary(_ action: [String: JSONScalar]) -> String {
        let type = action["type"]?.text ?? "action"
        if type == "transfer", let amount = action["amount"]?.text, let payee = action["payee"]?.text {
            return "Confirm transfer of \(action["currency"]?.text ?? "") \(amount) to \(payee)".replacingOccurrences(of: "  ", with: " ")
        }
        return "Confirm \(type)"
    }

    /// A code is bound to the authorization and to the action's hash.
    static func purpose(id: String, hash: String, summary: String) -> Purpose {
        Purpose.authorization(id: id, actionHash: hash, summary: summary)
    }

    /// The outcome of spending an authorization.
    enum Consumption: Equatable {
        case used
        /// Unknown, unapproved, expired or already used.
        case notFound
        /// The action differs from the approved one: the authorization is now void.
        case mismatch

        /// The problem to answer, or nil when used.
        var error: APIError? {
            switch self {
            case .used: nil
            case .notFound: .authorizationNotFound
            case .mismatch: .authorizationMismatch
            }
        }
    }

    /// Spends an approved authorization for `action`, which must be the very
    /// action that was approved; any difference voids the authorization.
    /// Returns rather than throws, so the caller commits the void and the
    /// audit entry before answering.
    static func consume(id: String, userID: String, action: [String: JSONScalar], env: Environment, on db: any SQLConnection) throws -> Consumption {
        let now = env.nowMillis
        guard let row = try db.queryOne("SELECT action_hash FROM authorizations WHERE id = $1 AND user_id = $2 AND status = 'approved' AND expires_at > $3",
                                        [.text(id), .text(userID), .int(now)]) else { return .notFound }
        guard ConstantTime.equals(try row.text("action_hash"), canonicalHash(action)) else {
            guard try db.execute("UPDATE authorizations SET status = 'void' WHERE id = $1 AND status = 'approved'", [.text(id)]) == 1 else { return .notFound }
            try AuditLog.append(AuditEvent(kind: .authorizationFailed, outcome: .denied, userID: userID, detail: "id=\(id) action changed"), at: now, on: db)
            return .mismatch
        }
        guard try db.execute("UPDATE authorizations SET status = 'used', used_at = $2 WHERE id = $1 AND status = 'approved'", [.text(id), .int(now)]) == 1 else {
            return .notFound
        }
        try AuditLog.append(AuditEvent(kind: .authorizationUsed, outcome: .success, userID: userID, detail: "id=\(id)"), at: now, on: db)
        return .used
    }
}
