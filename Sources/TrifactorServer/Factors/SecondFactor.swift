import API
import Core
import Foundation
import Store

/// A second factor: one strategy per kind, listed in `SecondFactors`.
/// Adding a kind is adding a folder under Factors/ with a type conforming to
/// this protocol and a case in the registry.
protocol SecondFactor: Sendable {
    var kind: Factor.Kind { get }

    /// Starts an enrollment for `user`: validates the request and sets up
    /// the proof of possession to come (sends a code, or hands out a secret).
    /// - Throws: `CommonFailure.invalidFields`, `SecondFactorFailure`.
    func beginEnrollment(
        _ request: StartEnrollmentRequest, user: UserRecord, factorID: FactorID, client: AuditContext, now: Date
    ) throws -> EnrollmentStart

    /// Checks the proof of an enrollment inside the transaction that stores
    /// the factor (spending what it uses, as `verify` does); what the factor
    /// will hold when it is right, nil when it is not.
    func finishEnrollment(
        _ draft: EnrollmentDraft, proof: EnrollmentProof, client: AuditContext, now: Date, on db: any SQLConnection
    ) throws -> EnrolledCredential?

    /// Sends (a phone code) or issues (what a device or passkey signs) what
    /// the user answers for `purpose`; nothing for factors the user carries.
    /// `message` says what the code confirms ("Confirm transfer of …").
    func challenge(_ factor: Factor, purpose: Purpose, intent: CodeIntent, client: AuditContext, now: Date) throws
        -> ChallengeIssued

    /// Checks `proof` for `purpose` inside the caller's transaction, spending
    /// what it uses (a TOTP step, a challenge, a recovery code): true once,
    /// when right.
    func verify(
        _ factor: Factor, proof: Proof, purpose: Purpose, client: AuditContext, now: Date, on db: any SQLConnection
    ) throws -> Bool

    /// Why `proof` cannot be a proof of `factor` at all (a TOTP code of
    /// letters, a recovery code of the wrong length), in words for a field
    /// problem; nil when it might be. Such a proof costs no attempt.
    func malformed(_ proof: Proof, of factor: Factor) -> String?
}

extension SecondFactor {
    func malformed(_ proof: Proof, of factor: Factor) -> String? { nil }
}

/// What `beginEnrollment` sets up.
struct EnrollmentStart: Sendable {
    let pending: PendingEnrollment
    let displayName: String
    let offer: EnrollmentOffer
}

/// What an enrollment hands the client.
enum EnrollmentOffer: Sendable {
    case phone(maskedPhone: String)
    case totp(secret: String, otpauthURI: String, qrSVG: String)
    case device(challenge: String)
    case passkey(CreationOptions)
}

/// The proof that finishes an enrollment: a code or a device's signature, or a passkey's registration.
enum EnrollmentProof: Sendable {
    case code(String)
    /// A device's signature, and its approval key's (`approval_signature`).
    case deviceSignatures(String, approval: String)
    case registration(CredentialJSON)
}

/// What a finished enrollment stores.
struct EnrolledCredential: Sendable {
    let credential: FactorCredential
    /// A TOTP factor's first step its replay guard refuses (the enrollment code's).
    var initialStep: Int64? = nil
}

/// What a challenge hands the client.
enum ChallengeIssued: Sendable {
    /// Nothing to carry: the code was sent, or the user holds it.
    case none
    /// What the device signs.
    case sign(String)
    /// The options for `navigator.credentials.get`.
    case passkey(RequestOptions)
}

/// Refusals of second factors: enrolling, challenging, proving.
enum SecondFactorFailure: Error, Equatable {
    /// A code, signature or assertion that is wrong, used, expired or tried too often.
    case invalidCode
    /// A wrong proof counted against the user: `remaining` more before the second step locks.
    case wrongProof(remaining: Int)
    /// Too many consecutive wrong codes for this user: wait.
    case locked(retryAfter: Int)
    /// The last wrong proof this purpose allowed: what was being confirmed has ended.
    case exhausted
    /// A hundred wrong proofs in a row on this account: locked until an administrator resets its factors.
    case frozen
    case factorNotFound
    /// This factor cannot be used for this.
    case unusable
    /// This factor is enrolled already.
    case exists
    case limitExceeded
    /// Recovery codes need another factor first.
    case needed
    case enrollmentNotFound
    case unverifiedEmail
    /// A first factor needs a recent password.
    case reauthenticationRequired
    /// This needs a recent second factor.
    case secondFactorRequired
    /// The server has no key file.
    case totpUnavailable
    /// No message provider is configured.
    case deliveryUnavailable
    /// The pending sign-in expired, was used, or never existed.
    case invalidPendingCredential
}

/// A name the user gives a factor or a device: trimmed, at most 64
/// characters, no control characters; nil when absent or blank.
enum FactorName {
    static func parse(_ raw: String?, field: String) throws -> String? {
        guard let name = raw?.trimmingCharacters(in: .whitespacesAndNewlines), !name.isEmpty else { return nil }
        guard name.count <= 64, !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw CommonFailure.invalid(field, "must be 1 to 64 characters, without control characters")
        }
        return name
    }
}

/// The registry of second factors: one strategy per kind.
struct SecondFactors: Sendable {
    let phone: PhoneFactor
    let totp: TOTPFactor
    let recoveryCodes: RecoveryCodesFactor
    let device: DeviceKeyFactor
    let passkey: PasskeyFactor

    func strategy(_ kind: Factor.Kind) -> any SecondFactor {
        switch kind {
        case .phone: phone
        case .totp: totp
        case .recoveryCode: recoveryCodes
        case .device: device
        case .passkey: passkey
        }
    }
}
