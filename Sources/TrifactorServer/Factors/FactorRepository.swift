import API
import Foundation
import Phone
import Store

/// A stored second factor.
struct FactorRecord: Sendable {
    let id: String
    let userID: String
    let kind: String
    let displayName: String
    let phone: String?
    let secretSealed: String?
    /// TOTP parameters (`SHA1`/`SHA256`/`SHA512`, 6 or 8 digits).
    var algorithm: String? = nil
    var digits: Int? = nil
    /// Device keys: SubjectPublicKeyInfo DER, base64; passkeys: the COSE key, base64.
    var publicKey: String? = nil
    /// Passkeys: credential id (base64url), signature counter, transports, backup flags.
    var credentialID: String? = nil
    var signCount: Int64? = nil
    var transports: String? = nil
    var backupEligible: Bool? = nil
    var backedUp: Bool? = nil
    let createdAt: Int64
    let lastUsedAt: Int64?
    /// For TOTP: the step of the enrollment code, the first one the replay guard refuses again.
    var initialStep: Int64? = nil

    /// `+*******0100`.
    var maskedPhone: String? { phone.map { FactorRecord.mask("+" + $0) } }

    var api: EnrolledFactor {
        EnrolledFactor(enrollmentID: id, kind: kind, displayName: displayName, maskedPhone: maskedPhone, enrolledAt: Date(millis: createdAt),
                       lastUsedAt: lastUsedAt.map { Date(millis: $0) })
    }

    /// Every digit but the last four as `*`.
    static func mask(_ e164: String) -> String {
        let digits = e164.filter(\.isNumber)
        let keep = digits.suffix(4)
        return "+" + String(repeating: "*", count: max(0, digits.count - keep.count)) + keep
    }
}

/// The `mfa_factors` table.
enum FactorRepository {
    private static let columns = "id, user_id, kind, display_name, phone, secret_sealed, algorithm, digits, public_key, credential_id, sign_count, transports, backup_eligible, backed_up, created_at, last_used_at"

    static func insert(_ f: FactorRecord, on db: any SQLConnection) throws {
        try db.execute("""
            INSERT INTO mfa_factors (id, user_id, kind, display_name, phone, secret_sealed, algorithm, digits, period, last_step, created_at, public_key,
              credential_id, sign_count, transports, backup_eligible, backed_up)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
            """, [.text(f.id), .text(f.userID), .text(f.kind), .text(f.displayName), SQLValue(f.phone), SQLValue(f.secretSealed),
                  SQLValue(f.algorithm), SQLValue(f.digits), f.kind == "totp" ? .int(30) : .null,
                  SQLValue(f.initialStep), .int(f.createdAt), SQLValue(f.publicKey), SQLValue(f.credentialID), SQLValue(f.signCount),
                  SQLValue(f.transports), f.backupEligible.map { SQLValue($0) } ?? .null, f.backedUp.map { SQLValue($0) } ?? .null])
    }

    static func list(userID: String, on db: any SQLConnection) throws -> [FactorRecord] {
        try db.query("SELECT \(columns) FROM mfa_factors WHERE user_id = $1 ORDER BY created_at, id", [.text(userID)]).map(record)
    }

    static func find(id: String, userID: String, on db: any SQLConnection) throws -> FactorRecord? {
        try db.queryOne("SELECT \(columns) FROM mfa_factors WHERE id = $1 AND user_id = $2", [.text(id), .text(userID)]).map(record)
    }

    static func delete(id: String, userID: String, on db: any SQLConnection) throws -> Bool {
        try db.execute("DELETE FROM mfa_factors WHERE id = $1 AND user_id = $2", [.text(id), .text(userID)]) == 1
    }

    /// Stores a challenge issued to `factor` for `purpose` (device keys, passkeys).
    static func insertChallenge(_ challenge: String, factor: FactorRecord, purpose: String, id: String, at: Int64, on db: any SQLConnection) throws {
        try db.execute("INSERT INTO mfa_challenges (id, user_id, factor_id, purpose, challenge, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
                       [.text(id), .text(factor.userID), .text(factor.id), .text(purpose), .text(challenge), .int(at)])
    }

    /// The newest unused challenge of `factorID` for `purpose` issued after `since`: (row id, challenge).
    static func latestChallenge(factorID: String, purpose: String, since: Int64, on db: any SQLConnection) throws -> (id: String, challenge: String)? {
        guard let row = try db.queryOne("""
            SELECT id, challenge FROM mfa_challenges
            WHERE factor_id = $1 AND purpose = $2 AND used_at IS NULL AND created_at > $3 AND challenge IS NOT NULL
            ORDER BY created_at DESC, id LIMIT 1
            """, [.text(factorID), .text(purpose), .int(since)]), let challenge = try row.optionalText("challenge") else { return nil }
        return (try row.text("id"), challenge)
    }

    /// Spends a challenge; false when it was spent meanwhile (each works once).
    static func spendChallenge(id: String, at: Int64, on db: any SQLConnection) throws -> Bool {
        try db.execute("UPDATE mfa_challenges SET used_at = $2 WHERE id = $1 AND used_at IS NULL", [.text(id), .int(at)]) == 1
    }

    /// The passkey with credential id `credentialID` (base64url), of any user.
    static func passkey(credentialID: String, on db: any SQLConnection) throws -> FactorRecord? {
        try db.queryOne("SELECT \(columns) FROM mfa_factors WHERE credential_id = $1 AND kind = 'passkey'", [.text(credentialID)]).map(record)
    }

    /// Stores a passkey's new signature counter and backup state, only if
    /// the counter moves forward (or both are zero) in the database itself:
    /// false when a concurrent assertion got there first (a possible clone).
    static func recordAssertion(id: String, signCount: Int64, backedUp: Bool, at: Int64, on db: any SQLConnection) throws -> Bool {
        try db.execute("""
            UPDATE mfa_factors SET sign_count = $2, backed_up = $3, last_used_at = $4
            WHERE id = $1 AND (sign_count < $2 OR (sign_count = 0 AND $2 = 0))
            """, [.text(id), .int(signCount), SQLValue(backedUp), .int(at)]) == 1
    }

    static func markUsed(id: String, at: Int64, on db: any SQLConnection) throws {
        try db.execute("UPDATE mfa_factors SET last_used_at = $2 WHERE id = $1", [.text(id), .int(at)])
    }

    /// Moves the TOTP replay guard to `step`; false when that step (or a later one) was already used.
    static func advanceStep(id: String, to step: Int64, on db: any SQLConnection) throws -> Bool {
        try db.execute("UPDATE mfa_factors SET last_step = $2 WHERE id = $1 AND (last_step IS NULL OR last_step < $2)", [.text(id), .int(step)]) == 1
    }

    private static func record(_ row: Row) throws -> FactorRecord {
        FactorRecord(id: try row.text("id"), userID: try row.text("user_id"), kind: try row.text("kind"), displayName: try row.text("display_name"),
                     phone: try row.optionalText("phone"), secretSealed: try row.optionalText("secret_sealed"),
                     algorithm: try row.optionalText("algorithm"), digits: try row.optionalInt("digits").map(Int.init),
                     publicKey: try row.optionalText("public_key"), credentialID: try row.optionalText("credential_id"),
                     signCount: try row.optionalInt("sign_count"), transports: try row.optionalText("transports"),
                     backupEligible: try row.optionalInt("backup_eligible").map { $0 != 0 }, backedUp: try row.optionalInt("backed_up").map { $0 != 0 },
                     createdAt: try row.int("created_at"),
                     lastUsedAt: try row.optionalInt("last_used_at"))
    }
}
