import API
import Core
import Crypto
import Foundation

/// A key pair made on the user's device (on an iPhone, in the Secure Enclave,
/// usable only after Touch ID / Face ID; on Linux, the CLI's sealed key
/// file): the server keeps the P-256 public key and accepts ES256 signatures
/// over a documented message that names the challenge, the purpose and, for
/// a bound action, its hash:
///
///     trifactor-device-signature-v1
///     purpose: enroll | signin | stepup | authz
///     challenge: <base64url, 32 random bytes>
///     action: <action hash hex, or ->
///
/// (lines joined by "\n", no trailing newline). Each challenge works once,
/// within 5 minutes.
struct DeviceKeyFactor: SecondFactor {
    let env: Environment
    var kind: String { "device" }
    /// RFC 8176 `hwk`: proof of possession of a hardware-secured key.
    var method: String { "hwk" }
    var enrollable: Bool { true }
    static let challengeLifetime: Int64 = 5 * 60_000

    func beginEnrollment(_ request: StartEnrollmentRequest, user: UserRecord, factorID: String, context: AuditContext) throws -> EnrollmentDraft {
        guard let encoded = request.publicKey, let der = Data(base64Encoded: encoded),
              let key = try? ECDSAPublicKey(subjectPublicKeyInfo: Array(der))
        else { throw APIError.invalidFields([.init(name: "public_key", reason: "must be a P-256 public key (SubjectPublicKeyInfo, DER, base64)")]) }
        guard let name = try FactorName.parse(request.deviceName, field: "device_name") else {
            throw APIError.invalidFields([.init(name: "device_name", reason: "is required for a device")])
        }
        // One key, one factor: compared in canonical form, whatever encoding either side used.
        let canonical = Data(key.canonicalSubjectPublicKeyInfo).base64EncodedString()
        let enrolled = try env.read { db in
            try db.query("SELECT public_key FROM mfa_factors WHERE user_id = $1 AND kind = $2", [.text(user.id), .text(kind)])
                .compactMap { try $0.optionalText("public_key") }
        }
        if enrolled.contains(where: { Self.canonical($0) == canonical }) { throw APIError.secondFactorExists }
        let challenge = Base64URL.encode(env.random.bytes(32))
        return EnrollmentDraft(kind: kind, userID: user.id, factorID: factorID, displayName: name, publicKey: canonical, challenge: challenge,
                               response: EnrollmentStarted(challenge: challenge))
    }

    func finishEnrollment(_ draft: EnrollmentDraft, proof: Proof, context: AuditContext) throws -> FactorRecord? {
        guard let code = proof.code else { return nil }
        guard let publicKey = draft.publicKey, let challenge = draft.challenge,
              Self.verify(signature: code, publicKey: publicKey, message: Self.message(purpose: "enroll", challenge: challenge, action: nil))
        else { return nil }
        return FactorRecord(id: draft.factorID, userID: draft.userID, kind: kind, displayName: draft.displayName, phone: nil, secretSealed: nil,
                            publicKey: publicKey, createdAt: env.nowMillis, lastUsedAt: nil)
    }

    func challenge(_ factor: FactorRecord, purpose: Purpose, context: AuditContext) throws -> String? {
        let challenge = Base64URL.encode(env.random.bytes(32))
        try env.transaction { try FactorRepository.insertChallenge(challenge, factor: factor, purpose: purpose.key, id: env.newID(), at: env.nowMillis, on: $0) }
        return challenge
    }

    func verify(_ factor: FactorRecord, proof: Proof, purpose: Purpose, context: AuditContext) throws -> Bool {
        guard let code = proof.code else { return false }
        guard let publicKey = factor.publicKey else { return false }
        return try env.transaction { db in
            let now = env.nowMillis
            guard let (rowID, challenge) = try FactorRepository.latestChallenge(factorID: factor.id, purpose: purpose.key,
                                                                                since: now - Self.challengeLifetime, on: db) else { return false }
            guard Self.verify(signature: code, publicKey: publicKey,
                              message: Self.message(purpose: purpose.label, challenge: challenge, action: purpose.actionHash)) else {
                return false
            }
            // Each challenge works once, even against two requests at the same moment.
            return try FactorRepository.spendChallenge(id: rowID, at: now, on: db)
        }
    }

    /// The message a device signs.
    static func message(purpose: String, challenge: String, action: String?) -> [UInt8] {
        Array("trifactor-device-signature-v1\npurpose: \(purpose)\nchallenge: \(challenge)\naction: \(action ?? "-")".utf8)
    }

    /// The canonical base64 SubjectPublicKeyInfo of a stored key.
    static func canonical(_ publicKey: String) -> String? {
        guard let der = Data(base64Encoded: publicKey), let key = try? ECDSAPublicKey(subjectPublicKeyInfo: Array(der)) else { return nil }
        return Data(key.canonicalSubjectPublicKeyInfo).base64EncodedString()
    }

    static func verify(signature: String, publicKey: String, message: [UInt8]) -> Bool {
        guard signature.count <= 200, let sig = Data(base64Encoded: signature) ?? Base64URL.decode(signature).map({ Data($0) }),
              let der = Data(base64Encoded: publicKey), let key = try? ECDSAPublicKey(subjectPublicKeyInfo: Array(der))
        else { return false }
        return key.isValidSignature(Array(sig), for: message)
    }
}
