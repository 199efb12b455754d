import API
import Core
import Crypto
import Foundation
import Phone
import Store

/// An enrollment in progress: what the new factor will hold once its
/// possession is proven.
struct EnrollmentDraft: Sendable {
    let userID: UserID
    let factorID: FactorID
    var displayName: String
    let pending: PendingEnrollment

    var kind: Factor.Kind { pending.kind }
}

/// What each kind of enrollment waits for.
enum PendingEnrollment: Sendable {
    /// A code sent to the number by this verification.
    case phone(PhoneNumber, verification: VerificationID)
    /// A code from the app holding this secret.
    case totp(TOTPSecret)
    /// The device's signatures over this challenge with these keys.
    case device(DeviceKeys, challenge: String)
    /// A registration for this challenge.
    case passkey(challenge: String)

    var kind: Factor.Kind {
        switch self {
        case .phone: .phone
        case .totp: .totp
        case .device: .device
        case .passkey: .passkey
        }
    }
}

/// The `mfa_enrollments` table: enrollments waiting for proof of possession.
enum EnrollmentRepository {
    static let enrollmentLifetime: Int64 = 10 * 60_000
    static let enrollmentAttempts = 5

    static func insertEnrollment(_ d: EnrollmentDraft, tokenHash: String, now: Int64, on db: any SQLConnection) throws {
        var phone: String?
        var sealed: String?
        var algorithm: String?
        var digits: Int?
        var verification: String?
        var publicKey: String?
        var challenge: String?
        var approvalKey: String?
        var approvalGate: String?
        var biometry: String?
        switch d.pending {
        case .phone(let number, let id):
            phone = number.digits
            verification = id.raw
        case .totp(let secret):
            sealed = Data(secret.sealed).base64EncodedString()
            algorithm = secret.algorithm.rawValue
            digits = secret.digits
        case .device(let keys, let c):
            publicKey = Data(keys.signing.canonicalSubjectPublicKeyInfo).base64EncodedString()
            approvalKey = keys.approval.map { Data($0.key.canonicalSubjectPublicKeyInfo).base64EncodedString() }
            approvalGate = keys.approval?.gate.rawValue
            biometry = keys.approval?.biometry?.rawValue
            challenge = c
        case .passkey(let c):
            challenge = c
        }
        try db.execute(
            """
            INSERT INTO mfa_enrollments (token_hash, user_id, kind, factor_id, phone, secret_sealed, algorithm, digits, verify_request_id, created_at, expires_at,
              public_key, challenge, display_name, approval_key, approval_gate, biometry)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
            """,
            [
                .text(tokenHash), d.userID.sql, d.kind.sql, d.factorID.sql, SQLValue(phone), SQLValue(sealed),
                SQLValue(algorithm), SQLValue(digits),
                SQLValue(verification), .int(now), .int(now + enrollmentLifetime), SQLValue(publicKey),
                SQLValue(challenge), .text(d.displayName),
                SQLValue(approvalKey), SQLValue(approvalGate), SQLValue(biometry),
            ])
    }

    /// Counts one attempt at a live enrollment of `userID` (unused,
    /// unexpired, fewer than 5 attempts) and returns it; nil when there is none.
    static func enrollmentAttempt(tokenHash: String, userID: UserID, now: Int64, on db: any SQLConnection) throws
        -> EnrollmentDraft?
    {
        guard
            let row = try db.queryOne(
                """
                UPDATE mfa_enrollments SET failures = failures + 1
                WHERE token_hash = $1 AND user_id = $2 AND used_at IS NULL AND expires_at > $3 AND failures < $4
                RETURNING kind, factor_id, display_name, phone, secret_sealed, algorithm, digits, verify_request_id, public_key, challenge,
                  approval_key, approval_gate, biometry
                """, [.text(tokenHash), userID.sql, .int(now), .int(Int64(enrollmentAttempts))])
        else { return nil }
        let kind: Factor.Kind = try row.value("kind")
        let columns = FactorColumns(row: row, owner: "\(kind.rawValue) enrollment")
        let pending: PendingEnrollment
        switch kind {
        case .phone:
            pending = .phone(
                try columns.phone(),
                verification: try columns.required(try row.optionalID("verify_request_id"), "verify_request_id"))
        case .totp:
            pending = .totp(try columns.totpSecret())
        case .device:
            pending = .device(try columns.deviceKeys(), challenge: try columns.text("challenge"))
        case .passkey:
            pending = .passkey(challenge: try columns.text("challenge"))
        case .recoveryCode:
            throw StoreError(.decoding, detail: "recovery codes are never enrolled")
        }
        return EnrollmentDraft(
            userID: userID, factorID: try row.id("factor_id"), displayName: try row.text("display_name"),
            pending: pending)
    }

    /// The sealed secret of a live authenticator-app enrollment of `userID`, read without counting an attempt (to
    /// show its QR code again); nil when there is none.
    static func pendingTOTP(tokenHash: String, userID: UserID, now: Int64, on db: any SQLConnection) throws -> (
        factorID: FactorID, secret: TOTPSecret
    )? {
        guard
            let row = try db.queryOne(
                """
                SELECT kind, factor_id, phone, secret_sealed, algorithm, digits, verify_request_id, public_key, challenge,
                  approval_key, approval_gate, biometry FROM mfa_enrollments
                WHERE token_hash = $1 AND user_id = $2 AND used_at IS NULL AND expires_at > $3 AND failures < $4
                  AND kind = 'totp'
                """, [.text(tokenHash), userID.sql, .int(now), .int(Int64(enrollmentAttempts))])
        else { return nil }
        return (try row.id("factor_id"), try FactorColumns(row: row, owner: "totp enrollment").totpSecret())
    }

    /// The numbers of the user's phone enrollments.
    static func phones(of userID: UserID, on db: any SQLConnection) throws -> [String] {
        try db.query("SELECT phone FROM mfa_enrollments WHERE user_id = $1 AND phone IS NOT NULL", [userID.sql]).map {
            try $0.text("phone")
        }
    }

    /// Whether a phone enrollment of a user other than `userID` is on `digits`.
    static func isEnrolling(phone digits: String, otherThan userID: UserID, on db: any SQLConnection) throws -> Bool {
        try db.queryOne(
            "SELECT 1 AS held FROM mfa_enrollments WHERE phone = $1 AND user_id <> $2 LIMIT 1",
            [.text(digits), userID.sql]) != nil
    }

    /// Spends an enrollment; false when it was spent meanwhile.
    static func useEnrollment(tokenHash: String, now: Int64, on db: any SQLConnection) throws -> Bool {
        try db.execute(
            "UPDATE mfa_enrollments SET used_at = $2 WHERE token_hash = $1 AND used_at IS NULL",
            [.text(tokenHash), .int(now)]) == 1
    }
}
