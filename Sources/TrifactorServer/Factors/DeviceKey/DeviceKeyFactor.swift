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
///
/// A device may enroll a second key, its approval key, that its platform
/// releases only after the user's check (the Secure Enclave after Face ID,
/// the Linux vault after its passphrase). The first key then only signs
/// polls and denials; approvals, step-ups, sign-ins and bound actions are
/// checked against the approval key alone, so a hooked "Face ID passed" on
/// the phone approves nothing. The approval key signs the enrollment
/// challenge too, with action `approval-key`.
struct DeviceKeyFactor: SecondFactor {
    let transactions: Transactions
    let random: RandomSource
    var approvalKeys: DeviceApprovalKeys = .optional
    var kind: Factor.Kind { .device }
    static let challengeLifetime: Int64 = 5 * 60_000

    func beginEnrollment(
        _ request: StartEnrollmentRequest, user: UserRecord, factorID: FactorID, client: AuditContext, now: Date
    ) throws -> EnrollmentStart {
        let key = try Self.key(request.publicKey, field: "public_key")
        guard let name = try FactorName.parse(request.deviceName, field: "device_name") else {
            throw CommonFailure.invalid("device_name", "is required for a device")
        }
        let keys = DeviceKeys(signing: key, approval: try approvalKey(request, signing: key))
        try transactions.read { try Self.refuseTaken(keys, of: user.id, on: $0) }
        let challenge = Base64URL.encode(random.bytes(32))
        return EnrollmentStart(
            pending: .device(keys, challenge: challenge), displayName: name, offer: .device(challenge: challenge))
    }

    /// One key, one factor: compared in canonical form, whatever encoding either side used, across both keys of every
    /// device of the user. Checked when an enrollment starts (to say so at once) and again in the transaction that
    /// finishes it, under the account's lock, so two enrollments at once never share a key across their two devices.
    /// - Throws: `SecondFactorFailure.exists`.
    private static func refuseTaken(_ keys: DeviceKeys, of userID: UserID, on db: any SQLConnection) throws {
        let taken = Set(
            try FactorRepository.list(userID, on: db).flatMap { factor -> [[UInt8]] in
                guard case .device(let other) = factor.credential else { return [] }
                return [other.signing.canonicalSubjectPublicKeyInfo]
                    + (other.approval.map { [$0.key.canonicalSubjectPublicKeyInfo] } ?? [])
            })
        let mine =
            [keys.signing.canonicalSubjectPublicKeyInfo]
            + (keys.approval.map { [$0.key.canonicalSubjectPublicKeyInfo] } ?? [])
        if mine.contains(where: taken.contains) { throw SecondFactorFailure.exists }
    }

    /// The operator's `TRIFACTOR_DEVICE_APPROVAL_KEY` applied to a device's keys: when the enrollment starts, and
    /// again when it finishes (a setting tightened meanwhile holds for a draft started before).
    private func refuseBelowSetting(_ approval: ApprovalKey?) throws {
        guard let approval else {
            if approvalKeys != .optional {
                throw CommonFailure.invalid(
                    "approval_key",
                    "is required: this server accepts only devices whose approvals need the user's check")
            }
            return
        }
        if approvalKeys == .biometric && approval.gate != .biometry {
            throw CommonFailure.invalid(
                "approval_key_gate", "must be biometry: this server accepts only approval keys released by biometrics")
        }
    }

    /// The request's approval key, checked against the operator's `TRIFACTOR_DEVICE_APPROVAL_KEY`.
    private func approvalKey(_ request: StartEnrollmentRequest, signing: ECDSAPublicKey) throws -> ApprovalKey? {
        guard request.approvalKey != nil else {
            try refuseBelowSetting(nil)
            if request.approvalKeyGate != nil || request.biometry != nil {
                throw CommonFailure.invalid("approval_key", "is required with approval_key_gate or biometry")
            }
            return nil
        }
        let key = try Self.key(request.approvalKey, field: "approval_key")
        guard key.canonicalSubjectPublicKeyInfo != signing.canonicalSubjectPublicKeyInfo else {
            throw CommonFailure.invalid(
                "approval_key", "must differ from public_key (the key that signs polls never prompts)")
        }
        guard let gate = request.approvalKeyGate.flatMap(ApprovalGate.init(rawValue:)) else {
            throw CommonFailure.invalid("approval_key_gate", "must be biometry, biometry_or_passcode or passphrase")
        }
        let biometry = try request.biometry.map { raw in
            guard let known = DeviceBiometry(rawValue: raw) else {
                throw CommonFailure.invalid("biometry", "must be face_id, touch_id or optic_id")
            }
            return known
        }
        if biometry != nil && gate == .passphrase {
            throw CommonFailure.invalid("biometry", "means nothing for a passphrase gate")
        }
        let approval = ApprovalKey(key: key, gate: gate, biometry: biometry)
        try refuseBelowSetting(approval)
        return approval
    }

    private static func key(_ encoded: String?, field: String) throws -> ECDSAPublicKey {
        guard let encoded, let der = Data(base64Encoded: encoded),
            let key = try? ECDSAPublicKey(subjectPublicKeyInfo: Array(der))
        else {
            throw CommonFailure.invalid(field, "must be a P-256 public key (SubjectPublicKeyInfo, DER, base64)")
        }
        return key
    }

    func finishEnrollment(
        _ draft: EnrollmentDraft, proof: EnrollmentProof, client: AuditContext, now: Date, on db: any SQLConnection
    ) throws -> EnrolledCredential? {
        guard case .device(let keys, let challenge) = draft.pending else { return nil }
        let signature: String
        let approvalSignature: String?
        switch proof {
        case .code(let s): (signature, approvalSignature) = (s, nil)
        case .deviceSignatures(let s, let approval): (signature, approvalSignature) = (s, approval)
        case .registration: return nil
        }
        guard
            Self.isValid(
                signature: signature, key: keys.signing,
                message: Self.message(purpose: "enroll", challenge: challenge, action: nil))
        else { return nil }
        if let approval = keys.approval {
            // Both keys prove possession: the approval key over the same challenge, with its own action.
            guard let approvalSignature else {
                throw CommonFailure.invalid(
                    "approval_signature",
                    "is required: this enrollment has an approval key, which signs the challenge too")
            }
            guard
                Self.isValid(
                    signature: approvalSignature, key: approval.key,
                    message: Self.message(purpose: "enroll", challenge: challenge, action: "approval-key"))
            else { return nil }
        }
        try refuseBelowSetting(keys.approval)
        try Self.refuseTaken(keys, of: draft.userID, on: db)
        return EnrolledCredential(credential: .device(keys))
    }

    func challenge(_ factor: Factor, purpose: Purpose, intent: CodeIntent, client: AuditContext, now: Date) throws
        -> ChallengeIssued
    {
        let challenge = Base64URL.encode(random.bytes(32))
        try transactions.write { db in
            try FactorRepository.insertChallenge(
                id: .random(using: random), factor: factor, purpose: purpose, challenge: challenge, verification: nil,
                at: now.millis, on: db)
        }
        return .sign(challenge)
    }

    func verify(
        _ factor: Factor, proof: Proof, purpose: Purpose, client: AuditContext, now: Date, on db: any SQLConnection
    ) throws -> Bool {
        // Only the approval key, when the device has one: the key that signs polls never stands for the user.
        guard case .code(let signature) = proof, case .device(let keys) = factor.credential,
            let (id, _) = try FactorRepository.liveChallenges(
                factor.id, purpose: purpose, since: now.millis - Self.challengeLifetime, on: db
            ).first(where: {
                Self.isValid(
                    signature: signature, key: keys.approving,
                    message: Self.message(purpose: purpose.label, challenge: $0.challenge, action: purpose.actionHash))
            })
        else { return false }
        // Each challenge works once, even against two requests at the same moment.
        return try FactorRepository.spendChallenge(id, at: now.millis, on: db)
    }

    /// The message a device signs.
    static func message(purpose: String, challenge: String, action: String?) -> [UInt8] {
        Array(
            "trifactor-device-signature-v1\npurpose: \(purpose)\nchallenge: \(challenge)\naction: \(action ?? "-")".utf8
        )
    }

    /// Whether `signature` (DER, base64 or base64url) signs `message` under `key`.
    static func isValid(signature: String, key: ECDSAPublicKey, message: [UInt8]) -> Bool {
        guard signature.count <= 200,
            let bytes = Data(base64Encoded: signature).map(Array.init) ?? Base64URL.decode(signature)
        else { return false }
        return key.isValidSignature(bytes, for: message)
    }
}
