import API
import Foundation
import Store

/// What a second-factor proof is for. A code is sent for one purpose and
/// accepted for that purpose only.
struct Purpose: Sendable {
    /// `signin`, `stepup` or `authz`: what device keys sign as their purpose.
    let label: String
    /// The sign-in, session or authorization it belongs to.
    let subject: String
    /// A bound action's hash (hex), signed by device keys and carried in passkey challenges.
    let actionHash: String?
    /// What the code confirms, said in the SMS ("Confirm transfer of …"), or nil.
    let text: String?

    /// The stored form: `signin:<pending hash>`, `stepup:<session id>`, `authz:<id>:<action hash>`.
    var key: String { [label, subject, actionHash].compactMap { $0 }.joined(separator: ":") }

    /// The second step of the sign-in whose pending credential hashes to `pendingHash`.
    static func signIn(pendingHash: String, text: String? = nil) -> Purpose {
        Purpose(label: "signin", subject: pendingHash, actionHash: nil, text: text)
    }

    /// A step-up on session `sessionID`.
    static func stepUp(sessionID: String, text: String? = nil) -> Purpose {
        Purpose(label: "stepup", subject: sessionID, actionHash: nil, text: text)
    }

    /// The approval of authorization `id` for the action hashing to `actionHash`.
    static func authorization(id: String, actionHash: String, summary: String) -> Purpose {
        Purpose(label: "authz", subject: id, actionHash: actionHash, text: summary)
    }
}

/// What a user presents: a code (or a device's signature), or a passkey's credential.
enum Proof: Sendable {
    case code(String)
    case credential(CredentialJSON)

    /// The code or signature, if that is what was presented.
    var code: String? {
        if case .code(let c) = self { return c }
        return nil
    }

    /// The passkey credential, if that is what was presented.
    var credential: CredentialJSON? {
        if case .credential(let c) = self { return c }
        return nil
    }

    /// From a request's fields: an assertion wins; otherwise a non-empty code.
    /// - Throws: 422 when there is neither.
    static func from(code: String?, credential: CredentialJSON?) throws -> Proof {
        if let credential { return .credential(credential) }
        guard let code = code?.trimmingCharacters(in: .whitespaces), !code.isEmpty, code.count <= 4096 else {
            throw APIError.invalidFields([.init(name: "code", reason: "is required (a device sends its signature, a passkey its credential)")])
        }
        return .code(code)
    }
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
    func finishEnrollment(_ draft: EnrollmentDraft, proof: Proof, context: AuditContext) throws -> FactorRecord?

    /// Sends what the user needs to answer for `purpose` (a phone code);
    /// returns what the client must sign, for a device key; nothing for factors the user carries.
    func challenge(_ factor: FactorRecord, purpose: Purpose, context: AuditContext) throws -> String?

    /// Checks `proof` for `purpose`; true once, when right.
    func verify(_ factor: FactorRecord, proof: Proof, purpose: Purpose, context: AuditContext) throws -> Bool
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

/// A name the user gives a factor or a device: trimmed, at most 64
/// characters, no control characters; nil when absent or blank.
enum FactorName {
    static func parse(_ raw: String?, field: String) throws -> String? {
        guard let name = raw?.trimmingCharacters(in: .whitespacesAndNewlines), !name.isEmpty else { return nil }
        guard name.count <= 64, !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw APIError.invalidFields([.init(name: field, reason: "must be 1 to 64 characters, without control characters")])
        }
        return name
    }
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
