import API
import Core
import Crypto
import Foundation
import Phone
import Store
import WebAuthn

/// The `mfa_factors`, `mfa_challenges` and `recovery_codes` tables: each
/// factor row is decoded here, once, into its kind's credential; a row that
/// does not decode is a decoding error, never a factor with defaults.
enum FactorRepository {
    private static let columns = """
        id, user_id, kind, display_name, phone, secret_sealed, algorithm, digits, public_key, credential_id, sign_count, transports,
        backup_eligible, backed_up, created_at, last_used_at, approval_key, approval_gate, biometry
        """

    /// Stores `factor`; `initialStep` seeds a TOTP factor's replay guard (the enrollment code's step).
    static func insert(_ factor: Factor, initialStep: Int64? = nil, on db: any SQLConnection) throws {
        var phone: String?
        var sealed: String?
        var algorithm: String?
        var digits: Int?
        var period: Int?
        var publicKey: String?
        var credentialID: String?
        var signCount: Int64?
        var transports: SQLValue = .null
        var backupEligible: Bool?
        var backedUp: Bool?
        var approvalKey: String?
        var approvalGate: String?
        var biometry: String?
        switch factor.credential {
        case .phone(let number): phone = number.digits
        case .totp(let secret):
            sealed = Data(secret.sealed).base64EncodedString()
            algorithm = secret.algorithm.rawValue
            digits = secret.digits
            period = TOTPFactor.period
        case .recoveryCodes: break
        case .device(let keys):
            publicKey = Data(keys.signing.canonicalSubjectPublicKeyInfo).base64EncodedString()
            approvalKey = keys.approval.map { Data($0.key.canonicalSubjectPublicKeyInfo).base64EncodedString() }
            approvalGate = keys.approval?.gate.rawValue
            biometry = keys.approval?.biometry?.rawValue
        case .passkey(let passkey):
            publicKey = Data(passkey.key.cose).base64EncodedString()
            credentialID = passkey.credentialID
            signCount = Int64(passkey.signCount)
            transports = StoredList.encode(passkey.transports)
            backupEligible = passkey.backupEligible
            backedUp = passkey.backedUp
        }
        try db.execute(
            """
            INSERT INTO mfa_factors (id, user_id, kind, display_name, phone, secret_sealed, algorithm, digits, period, last_step, created_at, public_key,
              credential_id, sign_count, transports, backup_eligible, backed_up, approval_key, approval_gate, biometry)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
            """,
            [
                factor.id.sql, factor.userID.sql, factor.kind.sql, .text(factor.displayName), SQLValue(phone),
                SQLValue(sealed),
                SQLValue(algorithm), SQLValue(digits), SQLValue(period), SQLValue(initialStep), .int(factor.createdAt),
                SQLValue(publicKey),
                SQLValue(credentialID), SQLValue(signCount), transports, backupEligible.map { SQLValue($0) } ?? .null,
                backedUp.map { SQLValue($0) } ?? .null, SQLValue(approvalKey), SQLValue(approvalGate),
                SQLValue(biometry),
            ])
    }

    static func list(_ userID: UserID, on db: any SQLConnection) throws -> [Factor] {
        try db.query("SELECT \(columns) FROM mfa_factors WHERE user_id = $1 ORDER BY created_at, id", [userID.sql]).map(
            decode)
    }

    static func find(_ id: FactorID, userID: UserID, on db: any SQLConnection) throws -> Factor? {
        try db.queryOne("SELECT \(columns) FROM mfa_factors WHERE id = $1 AND user_id = $2", [id.sql, userID.sql]).map(
            decode)
    }

    /// A device factor by id, of any user (a device authenticates by its key, not a session).
    static func device(_ id: FactorID, on db: any SQLConnection) throws -> Factor? {
        try db.queryOne("SELECT \(columns) FROM mfa_factors WHERE id = $1 AND kind = 'device'", [id.sql]).map(decode)
    }

    /// The passkey with credential id `credentialID` (base64url), of any user.
    static func passkey(credentialID: String, on db: any SQLConnection) throws -> Factor? {
        try db.queryOne(
            "SELECT \(columns) FROM mfa_factors WHERE credential_id = $1 AND kind = 'passkey'", [.text(credentialID)]
        ).map(decode)
    }

    static func rename(_ id: FactorID, userID: UserID, to name: String, on db: any SQLConnection) throws -> Bool {
        try db.execute(
            "UPDATE mfa_factors SET display_name = $3 WHERE id = $1 AND user_id = $2",
            [id.sql, userID.sql, .text(name)]) == 1
    }

    static func delete(_ id: FactorID, userID: UserID, on db: any SQLConnection) throws -> Bool {
        try db.execute("DELETE FROM mfa_factors WHERE id = $1 AND user_id = $2", [id.sql, userID.sql]) == 1
    }

    /// Deletes the user's factors of `kind`; returns how many.
    @discardableResult
    static func delete(kind: Factor.Kind, userID: UserID, on db: any SQLConnection) throws -> Int {
        try db.execute("DELETE FROM mfa_factors WHERE user_id = $1 AND kind = $2", [userID.sql, kind.sql])
    }

    /// Removes every factor of the user (an administrator's reset); returns how many.
    static func removeAll(of userID: UserID, on db: any SQLConnection) throws -> Int {
        try db.execute("DELETE FROM mfa_factors WHERE user_id = $1", [userID.sql])
    }

    // MARK: Phone numbers (stored as their digits: `insert`)

    /// The users with a phone factor on `digits`.
    static func users(withPhone digits: String, on db: any SQLConnection) throws -> [UserID] {
        try db.query("SELECT DISTINCT user_id FROM mfa_factors WHERE phone = $1", [.text(digits)]).map {
            try $0.id("user_id")
        }
    }

    /// The numbers of the user's phone factors.
    static func phones(of userID: UserID, on db: any SQLConnection) throws -> [String] {
        try db.query("SELECT phone FROM mfa_factors WHERE user_id = $1 AND phone IS NOT NULL", [userID.sql]).map {
            try $0.text("phone")
        }
    }

    /// Whether a phone factor of any user, or of a user other than `userID`, is on `digits`.
    static func isEnrolled(phone digits: String, otherThan userID: UserID? = nil, on db: any SQLConnection) throws
        -> Bool
    {
        guard let userID else {
            return try db.queryOne("SELECT 1 AS enrolled FROM mfa_factors WHERE phone = $1 LIMIT 1", [.text(digits)])
                != nil
        }
        return try db.queryOne(
            "SELECT 1 AS held FROM mfa_factors WHERE phone = $1 AND user_id <> $2 LIMIT 1", [.text(digits), userID.sql])
            != nil
    }

    /// The newest sealed TOTP secrets, at most `limit`: whether the key file opens them is checked at start-up.
    static func sealedSecrets(limit: Int, on db: any SQLConnection) throws -> [(id: String, sealed: String)] {
        try db.query(
            "SELECT id, secret_sealed FROM mfa_factors WHERE secret_sealed IS NOT NULL ORDER BY created_at DESC LIMIT $1",
            [.int(Int64(limit))]
        )
        .map { (try $0.text("id"), try $0.text("secret_sealed")) }
    }

    static func markUsed(_ id: FactorID, at: Int64, on db: any SQLConnection) throws {
        try db.execute("UPDATE mfa_factors SET last_used_at = $2 WHERE id = $1", [id.sql, .int(at)])
    }

    /// Moves the TOTP replay guard to `step`; false when that step (or a later one) was already used.
    static func advanceStep(_ id: FactorID, to step: Int64, on db: any SQLConnection) throws -> Bool {
        try db.execute(
            "UPDATE mfa_factors SET last_step = $2 WHERE id = $1 AND (last_step IS NULL OR last_step < $2)",
            [id.sql, .int(step)]) == 1
    }

    /// Stores a passkey's new signature counter and backup state, only if
    /// the counter moves forward (or both are zero) in the database itself:
    /// false when a concurrent assertion got there first (a possible clone).
    static func recordAssertion(_ id: FactorID, signCount: UInt32, backedUp: Bool, at: Int64, on db: any SQLConnection)
        throws -> Bool
    {
        try db.execute(
            """
            UPDATE mfa_factors SET sign_count = $2, backed_up = $3, last_used_at = $4
            WHERE id = $1 AND (sign_count < $2 OR (sign_count = 0 AND $2 = 0))
            """, [id.sql, .int(Int64(signCount)), SQLValue(backedUp), .int(at)]) == 1
    }

    // MARK: Challenges (device keys, passkeys, phone verifications)

    /// Stores what was issued to `factor` for `purpose`: the challenge a device or passkey signs, or the phone verification sent.
    static func insertChallenge(
        id: ChallengeID, factor: Factor, purpose: Purpose, challenge: String?, verification: VerificationID?,
        at: Int64, on db: any SQLConnection
    ) throws {
        try db.execute(
            """
            INSERT INTO mfa_challenges (id, user_id, factor_id, purpose, challenge, verify_request_id, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
            """,
            [
                id.sql, factor.userID.sql, factor.id.sql, purpose.sql, SQLValue(challenge), SQLValue(verification?.raw),
                .int(at),
            ])
    }

    /// The unused challenges of `factor` for `purpose` issued after `since`, newest first (a few at most: each send
    /// within the challenge's life adds one). A proof is matched against each, so two sends in one millisecond, or on
    /// two instances whose commits cross, never refuse the one the client answered.
    static func liveChallenges(
        _ factor: FactorID, purpose: Purpose, since: Int64,
        on db: any SQLConnection
    ) throws -> [(id: ChallengeID, challenge: String)] {
        try db.query(
            """
            SELECT id, challenge FROM mfa_challenges
            WHERE factor_id = $1 AND purpose = $2 AND used_at IS NULL AND created_at > $3 AND challenge IS NOT NULL
            ORDER BY created_at DESC, id LIMIT 10
            """, [factor.sql, purpose.sql, .int(since)]
        ).compactMap { row in
            try row.optionalText("challenge").map { (try row.id("id"), $0) }
        }
    }

    /// Spends a challenge; false when it was spent meanwhile (each works once, even against two requests at the same moment).
    static func spendChallenge(_ id: ChallengeID, at: Int64, on db: any SQLConnection) throws -> Bool {
        try db.execute("UPDATE mfa_challenges SET used_at = $2 WHERE id = $1 AND used_at IS NULL", [id.sql, .int(at)])
            == 1
    }

    /// The phone verifications sent to `factor` for `purpose`, newest first.
    static func verifications(_ factor: FactorID, purpose: Purpose, on db: any SQLConnection) throws -> [VerificationID]
    {
        try db.query(
            """
            SELECT verify_request_id FROM mfa_challenges
            WHERE factor_id = $1 AND purpose = $2 AND verify_request_id IS NOT NULL
            ORDER BY created_at DESC, id
            """, [factor.sql, purpose.sql]
        ).map { try $0.id("verify_request_id") }
    }

    // MARK: Decoding

    private static func decode(_ row: Row) throws -> Factor {
        let kind: Factor.Kind = try row.value("kind")
        let id: FactorID = try row.id("id")
        let columns = FactorColumns(row: row, owner: "\(kind.rawValue) factor \(id.raw)")
        let credential: FactorCredential
        switch kind {
        case .phone:
            credential = .phone(try columns.phone())
        case .totp:
            credential = .totp(try columns.totpSecret())
        case .recoveryCode:
            credential = .recoveryCodes
        case .device:
            credential = .device(try columns.deviceKeys())
        case .passkey:
            let cose = try columns.bytes("public_key")
            let key: CredentialPublicKey
            do { key = try CredentialPublicKey(cose: cose) } catch {
                throw StoreError(.decoding, detail: "passkey factor \(id.raw) holds a COSE key that does not parse")
            }
            credential = .passkey(
                Passkey(
                    credentialID: try columns.text("credential_id"), key: key,
                    signCount: UInt32(clamping: try row.optionalInt("sign_count") ?? 0),
                    transports: StoredList.decode(try row.optionalText("transports") ?? ""),
                    backupEligible: (try row.optionalInt("backup_eligible") ?? 0) != 0,
                    backedUp: (try row.optionalInt("backed_up") ?? 0) != 0))
        }
        return Factor(
            id: id, userID: try row.id("user_id"), displayName: try row.text("display_name"),
            createdAt: try row.int("created_at"),
            lastUsedAt: try row.optionalInt("last_used_at"), credential: credential)
    }
}
