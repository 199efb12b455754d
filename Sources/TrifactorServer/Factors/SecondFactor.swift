import API
import Foundation
import Store

/// What a second-factor proof is for. A phone code is sent for one purpose
/// and accepted for that purpose only; `text` is said in the message.
struct Purpose: Sendable {
    /// `signin:<pending id>`, `stepup:<session id>`, `authz:<authorization id>`.
    let key: String
    /// What the code confirms, in the SMS ("Confirm transfer of …"), or nil.
    let text: String?
}

/// A second factor: one strategy per kind, listed in `SecondFactors.all`.
/// Adding a kind is adding a folder under Factors/ with a type conforming to
/// this protocol and a line in the registry. Methods run their own
/// transactions: never call them inside one.
protocol SecondFactor: Sendable {
    /// The stored and wire name: `phone`, `totp`, `recovery_code`.
    var kind: String { get }
    /// The RFC 8176 method recorded on sessions: `sms`, `otp`, …
    var method: String { get }
    /// Whether `POST /v1/mfa/enrollments` enrolls this kind (recovery codes are generated instead).
    var enrollable: Bool { get }

    /// Starts an enrollment for `user`: validates the request and proves
    /// possession to come (sends a code, or hands out a secret).
    /// - Throws: `APIError` for bad input.
    func beginEnrollment(_ request: StartEnrollmentRequest, user: UserRecord, factorID: String, context: AuditContext) throws -> EnrollmentDraft

    /// Checks the proof of an enrollment; the factor to store when it holds.
    func finishEnrollment(_ draft: EnrollmentDraft, code: String, context: AuditContext) throws -> FactorRecord?

    /// Sends what the user needs to answer for `purpose` (a phone code);
    /// returns what the client must sign, for a device key; nothing for factors the user carries.
    func challenge(_ factor: FactorRecord, purpose: Purpose, context: AuditContext) throws -> String?

    /// Checks `code` for `purpose`; true once, when right.
    func verify(_ factor: FactorRecord, code: String, purpose: Purpose, context: AuditContext) throws -> Bool
}

/// An enrollment in progress, as stored in `mfa_enrollments`.
struct EnrollmentDraft: Sendable {
    let kind: String
    let userID: String
    let factorID: String
    var displayName: String
    var phone: String?
    var secretSealed: String?
    /// TOTP parameters.
    var algorithm: String? = nil
    var digits: Int? = nil
    /// Device keys: the SubjectPublicKeyInfo (base64) and the enrollment challenge.
    var publicKey: String? = nil
    var challenge: String? = nil
    var verifyRequestID: String?
    /// Extra answer fields for the client (masked phone, otpauth URI, …).
    var response: EnrollmentStarted
}

/// The registry of second factors.
enum SecondFactors {
    static func all(_ env: Environment) -> [any SecondFactor] {
        [PhoneFactor(env: env), TOTPFactor(env: env), RecoveryCodesFactor(env: env), DeviceKeyFactor(env: env), PasskeyFactor(env: env)]
    }

    static func named(_ kind: String, _ env: Environment) -> (any SecondFactor)? {
        all(env).first { $0.kind == kind }
    }
}
