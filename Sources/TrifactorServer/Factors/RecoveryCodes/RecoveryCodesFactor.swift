import API
import Core
import Crypto
import Foundation
import Messaging
import Store

/// Recovery codes: 10 codes of 10 characters from an alphabet without look-alikes
/// (no 0/O, 1/I/L), shown once as `XXXXX-XXXXX`, stored as SHA-256 over the
/// user id and the code, each usable once. Generating a new set voids the old
/// one. Using one is audited and tells the user by email.
struct RecoveryCodesFactor: SecondFactor {
    let transactions: Transactions
    let clock: Clock
    let random: RandomSource
    let outbox: Outbox
    var kind: Factor.Kind { .recoveryCode }
    static let alphabet = Array("23456789ABCDEFGHJKMNPQRSTUVWXYZ")

    func beginEnrollment(
        _ request: StartEnrollmentRequest, user: UserRecord, factorID: FactorID, client: AuditContext, now: Date
    ) throws -> EnrollmentStart {
        throw CommonFailure.invalid("kind", "recovery codes are created with POST /v1/mfa/recovery-codes")
    }

    func finishEnrollment(
        _ draft: EnrollmentDraft, proof: EnrollmentProof, client: AuditContext, now: Date, on db: any SQLConnection
    ) throws -> EnrolledCredential? { nil }

    func challenge(_ factor: Factor, purpose: Purpose, intent: CodeIntent, client: AuditContext, now: Date) throws
        -> ChallengeIssued
    { .none }

    func malformed(_ proof: Proof, of factor: Factor) -> String? {
        guard case .code(let code) = proof else { return nil }
        let normalized = Self.normalize(code)
        return normalized.count == 10 && normalized.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
            ? nil
            : "is one of your recovery codes: ten letters and digits, like ABCDE-12345"
    }

    func verify(
        _ factor: Factor, proof: Proof, purpose: Purpose, client: AuditContext, now: Date, on db: any SQLConnection
    ) throws -> Bool {
        guard case .code(let code) = proof else { return false }
        let normalized = SecureBytes(Array(Self.normalize(code).utf8))
        guard normalized.count == 10 else { return false }
        guard
            try RecoveryCodeRepository.use(
                factorID: factor.id, hash: Self.hash(normalized, userID: factor.userID), at: now.millis, on: db)
        else { return false }
        let left = try RecoveryCodeRepository.unused(factor.id, on: db)
        try AuditLog.append(
            client.event(.recoveryCodeUsed, .success, userID: factor.userID, detail: "left=\(left)"), at: now.millis,
            on: db)
        if let user = try AccountRepository.find(id: factor.userID, on: db) {
            try outbox.enqueueEmail(
                "recovery_code_used", to: user.email, language: outbox.texts.language(locale: nil, user: user.locale),
                values: client.branded(["left": .number(Int(left))]), now: now.millis, on: db)
        }
        return true
    }

    /// Replaces the user's codes with a new set; returns them (the only time they exist in clear).
    /// - Throws: `SecondFactorFailure.needed` when the user has no other factor.
    func generate(for user: UserRecord, client: AuditContext) throws -> [String] {
        let codes = (0..<10).map { _ in
            String((0..<10).map { _ in Self.alphabet[Int(random.uniform(UInt32(Self.alphabet.count)))] })
        }
        let now = clock.now().millis
        try transactions.write { db in
            // Serialised with removals, so codes never outlive the last real factor.
            try AccountRepository.lock(user.id, on: db)
            guard try FactorRepository.list(user.id, on: db).contains(where: { $0.kind.isStandalone }) else {
                throw SecondFactorFailure.needed
            }
            try FactorRepository.delete(kind: kind, userID: user.id, on: db)
            let factor = Factor(
                id: .random(using: random), userID: user.id, displayName: "Recovery codes", createdAt: now,
                lastUsedAt: nil,
                credential: .recoveryCodes)
            try FactorRepository.insert(factor, on: db)
            for code in codes {
                try RecoveryCodeRepository.insert(
                    id: .random(using: random), factorID: factor.id, userID: user.id,
                    hash: Self.hash(SecureBytes(Array(code.utf8)), userID: user.id), on: db)
            }
            try AuditLog.append(client.event(.recoveryCodesGenerated, .success, userID: user.id), at: now, on: db)
        }
        return codes.map { String($0.prefix(5)) + "-" + String($0.suffix(5)) }
    }

    /// Upper-cased, without dashes or spaces.
    static func normalize(_ code: String) -> String {
        code.uppercased().filter { $0 != "-" && $0 != " " }
    }

    /// SHA-256 over the user id and the normalised code.
    static func hash(_ normalized: SecureBytes, userID: UserID) -> String {
        normalized.withUnsafeBytes { SHA256.hex(Array((userID.raw + ":").utf8) + Array($0)) }
    }
}
