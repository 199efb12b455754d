import API
import Core
import Crypto
import Foundation
import Messaging

/// Recovery codes: 10 codes of 10 characters from an alphabet without look-alikes
/// (no 0/O, 1/I/L), shown once as `XXXXX-XXXXX`, stored as SHA-256 over the
/// user id and the code, each usable once. Generating a new set voids the old
/// one. Using one is audited and tells the user by email.
struct RecoveryCodesFactor: SecondFactor {
    let env: Environment
    var kind: String { "recovery_code" }
    var method: String { "lookup" }
    var enrollable: Bool { false }
    static let alphabet = Array("23456789ABCDEFGHJKMNPQRSTUVWXYZ")

    func beginEnrollment(_ request: StartEnrollmentRequest, user: UserRecord, factorID: String, context: AuditContext) throws -> EnrollmentDraft {
        throw APIError.invalidFields([.init(name: "kind", reason: "recovery codes are created with POST /v1/mfa/recovery-codes")])
    }

    func finishEnrollment(_ draft: EnrollmentDraft, proof: Proof, context: AuditContext) throws -> FactorRecord? { nil }

    func challenge(_ factor: FactorRecord, purpose: Purpose, context: AuditContext) throws -> String? { nil }

    func verify(_ factor: FactorRecord, proof: Proof, purpose: Purpose, context: AuditContext) throws -> Bool {
        guard let code = proof.code else { return false }
        let normalized = Self.normalize(code)
        guard normalized.count == 10 else { return false }
        return try env.transaction { db in
            let now = env.nowMillis
            guard try db.execute("UPDATE recovery_codes SET used_at = $3 WHERE factor_id = $1 AND code_hash = $2 AND used_at IS NULL",
                                 [.text(factor.id), .text(Self.hash(normalized, userID: factor.userID)), .int(now)]) == 1 else { return false }
            let left = try db.queryOne("SELECT COUNT(*) AS n FROM recovery_codes WHERE factor_id = $1 AND used_at IS NULL", [.text(factor.id)])?.int("n") ?? 0
            try AuditLog.append(context.event(.recoveryCodeUsed, .success, userID: factor.userID, detail: "left=\(left)"), at: now, on: db)
            if let user = try AccountRepository.find(id: factor.userID, on: db) {
                try Outbox(env: env).enqueue(channel: .email, to: user.email, text: """
                    A recovery code was just used to sign in to your Trifactor account. \(left) unused codes are left. \
                    If this was not you, sign in and remove your second factors' access now.
                    """, on: db)
            }
            return true
        }
    }

    /// Replaces the user's codes with a new set; returns them (the only time they exist in clear).
    func generate(for user: UserRecord, context: AuditContext) throws -> [String] {
        let codes = (0..<10).map { _ in String((0..<10).map { _ in Self.alphabet[Int(env.random.uniform(UInt32(Self.alphabet.count)))] }) }
        try env.transaction { db in
            let now = env.nowMillis
            // Serialised with removals, so codes never outlive the last real factor.
            try db.execute("UPDATE users SET id = id WHERE id = $1", [.text(user.id)])
            guard try FactorRepository.list(userID: user.id, on: db).contains(where: { $0.kind != kind }) else { throw APIError.secondFactorNeeded }
            try db.execute("DELETE FROM mfa_factors WHERE user_id = $1 AND kind = $2", [.text(user.id), .text(kind)])
            let factor = FactorRecord(id: env.newID(), userID: user.id, kind: kind, displayName: "Recovery codes", phone: nil, secretSealed: nil,
                                      createdAt: now, lastUsedAt: nil)
            try FactorRepository.insert(factor, on: db)
            for code in codes {
                try db.execute("INSERT INTO recovery_codes (id, factor_id, user_id, code_hash) VALUES ($1, $2, $3, $4)",
                               [.text(env.newID()), .text(factor.id), .text(user.id), .text(Self.hash(code, userID: user.id))])
            }
            try AuditLog.append(context.event(.recoveryCodesGenerated, .success, userID: user.id), at: now, on: db)
        }
        return codes.map { String($0.prefix(5)) + "-" + String($0.suffix(5)) }
    }

    /// Upper-cased, without dashes or spaces.
    static func normalize(_ code: String) -> String {
        code.uppercased().filter { $0 != "-" && $0 != " " }
    }

    static func hash(_ normalized: String, userID: String) -> String { SHA256.hex(userID + ":" + normalized) }
}
