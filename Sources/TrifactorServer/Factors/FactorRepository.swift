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
    /// Device keys: SubjectPublicKeyInfo DER, base64.
    var publicKey: String? = nil
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
    private static let columns = "id, user_id, kind, display_name, phone, secret_sealed, algorithm, digits, public_key, created_at, last_used_at"

    static func insert(_ f: FactorRecord, on db: any SQLConnection) throws {
        try db.execute("""
            INSERT INTO mfa_factors (id, user_id, kind, display_name, phone, secret_sealed, algorithm, digits, period, last_step, created_at, public_key)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
            """, [.text(f.id), .text(f.userID), .text(f.kind), .text(f.displayName), SQLValue(f.phone), SQLValue(f.secretSealed),
                  SQLValue(f.algorithm), SQLValue(f.digits), f.kind == "totp" ? .int(30) : .null,
                  SQLValue(f.initialStep), .int(f.createdAt), SQLValue(f.publicKey)])
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
                     publicKey: try row.optionalText("public_key"), createdAt: try row.int("created_at"),
                     lastUsedAt: try row.optionalInt("last_used_at"))
    }
}
