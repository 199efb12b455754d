import API
import Core
import Crypto
import Foundation
import Store

/// A key pair made on the user's device (on an iPhone, in the Secure Enclave,
/// usable only after Touch ID / Face ID; on Linux, the CLI's sealed key
/// file): the server keeps the P-256 public key and accepts ES256 signatures
/// over a documented message that names the challenge, the purpose and, for
/// a bound action, its hash:
///
///     trifactor-device-signature-v1
///     purpose: enroll | signin | stepup | authz | poll | push
///     challenge: <base64url, 32 random bytes>
///     action: <action hash hex, or ->
///
/// (lines joined by "\n", no trailing newline). Each challenge works once,
/// within 5 minutes.
struct DeviceKeyFactor: SecondFactor {
    let transactions: Transactions
    let random: RandomSource
    var kind: FactorKind { .device }
    static let challengeLifetime: Int64 = 5 * 60_000

    func beginEnrollment(_ request: StartEnrollmentRequest, user: UserRecord, factorID: FactorID, client: AuditContext, now: Date) throws -> EnrollmentStart {
        guard let encoded = request.publicKey, let der = Data(base64Encoded: encoded), let key = try? ECDSAPublicKey(subjectPublicKeyInfo: Array(der)) else {
            throw CommonFailure.invalid("public_key", "must be a P-256 public key (SubjectPublicKeyInfo, DER, base64)")
        }
        guard let name = try FactorName.parse(request.deviceName, field: "device_name") else {
            throw CommonFailure.invalid("device_name", "is required for a device")
        }
        // One key, one factor: compared in canonical form, whatever encoding either side used.
        let enrolled = try transactions.read { try FactorRepository.list(user.id, on: $0) }
        if enrolled.contains(where: { if case .device(let other) = $0.credential { other.canonicalSubjectPublicKeyInfo == key.canonicalSubjectPublicKeyInfo } else { false } }) {
            throw SecondFactorFailure.exists
        }
        let challenge = Base64URL.encode(random.bytes(32))
        return EnrollmentStart(pending: .device(key, challenge: challenge), displayName: name, offer: .device(challenge: challenge))
    }

    func finishEnrollment(_ draft: EnrollmentDraft, proof: EnrollmentProof, client: AuditContext, now: Date, on db: any SQLConnection) throws -> EnrolledCredential? {
        guard case .code(let signature) = proof, case .device(let key, let challenge) = draft.pending,
              Self.isValid(signature: signature, key: key, message: Self.message(purpose: "enroll", challenge: challenge, action: nil))
        else { return nil }
        return EnrolledCredential(credential: .device(key))
    }

    func challenge(_ factor: Factor, purpose: Purpose, intent: CodeIntent, client: AuditContext, now: Date) throws -> ChallengeIssued {
        let challenge = Base64URL.encode(random.bytes(32))
        try transactions.write { db in
            try FactorRepository.insertChallenge(id: .random(using: random), factor: factor, purpose: purpose, challenge: challenge, verification: nil,
                                                 at: now.millis, on: db)
        }
        return .sign(challenge)
    }

    func verify(_ factor: Factor, proof: Proof, purpose: Purpose, client: AuditContext, now: Date, on db: any SQLConnection) throws -> Bool {
        guard case .code(let signature) = proof, case .device(let key) = factor.credential,
              let (id, _) = try FactorRepository.liveChallenges(factor.id, purpose: purpose, since: now.millis - Self.challengeLifetime, on: db).first(where: {
                  Self.isValid(signature: signature, key: key, message: Self.message(purpose: purpose.label, challenge: $0.challenge, action: purpose.actionHash))
              })
        else { return false }
        // Each challenge works once, even against two requests at the same moment.
        return try FactorRepository.spendChallenge(id, at: now.millis, on: db)
    }

    /// The message a device signs.
    static func message(purpose: String, challenge: String, action: String?) -> [UInt8] {
        Array("trifactor-device-signature-v1\npurpose: \(purpose)\nchallenge: \(challenge)\naction: \(action ?? "-")".utf8)
    }

    /// Whether `signature` (DER, base64 or base64url) signs `message` under `key`.
    static func isValid(signature: String, key: ECDSAPublicKey, message: [UInt8]) -> Bool {
        guard signature.count <= 200, let bytes = Data(base64Encoded: signature).map(Array.init) ?? Base64URL.decode(signature) else { return false }
        return key.isValidSignature(bytes, for: message)
    }
}
