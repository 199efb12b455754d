import API
import Core
import Crypto
import Foundation
import Phone
import WebAuthn

/// A stored second factor, its row decoded once (in `FactorRepository`)
/// into what its kind holds: strategies never re-check optionals or
/// re-parse keys.
struct Factor: Sendable {
    let id: FactorID
    let userID: UserID
    let displayName: String
    let createdAt: Int64
    let lastUsedAt: Int64?
    let credential: FactorCredential

    var kind: Factor.Kind { credential.kind }

    /// The factor as the API lists it.
    var api: EnrolledFactor {
        var keys: DeviceKeys?
        if case .device(let k) = credential { keys = k }
        return EnrolledFactor(
            enrollmentID: id.raw, kind: kind.wire, displayName: displayName, maskedPhone: credential.phone?.masked,
            enrolledAt: Date(millis: createdAt), lastUsedAt: lastUsedAt.map { Date(millis: $0) },
            approvalBound: keys.map { $0.approval != nil }, approvalGate: keys?.approval?.gate.rawValue)
    }

    /// The RFC 8176 methods a session records when this factor is proven: a
    /// device's approval key adds what released it (§2: `face`, `fpt` or
    /// `iris` for the biometry the device named, `user` when it may have been
    /// the passcode, `pin` for a passphrase). A key behind a passphrase is the
    /// Linux vault's, a software key: `swk`, not `hwk` (§2).
    var methods: [AuthMethod] {
        guard case .device(let keys) = credential, let approval = keys.approval else { return [kind.method] }
        return [approval.gate == .passphrase ? .swk : .hwk, approval.method]
    }
}

/// A device factor's keys: `signing` signs its polls and denials (it never
/// prompts, so it can sign while the screen is locked); `approval`, when the
/// device made one, is released only by the user's check and is the only
/// key an approval, a step-up, a sign-in or a bound action is checked against.
struct DeviceKeys: Sendable {
    let signing: ECDSAPublicKey
    let approval: ApprovalKey?

    /// The key an approval must be signed with.
    var approving: ECDSAPublicKey { approval?.key ?? signing }
}

/// A device's approval key and what releases it.
struct ApprovalKey: Sendable {
    let key: ECDSAPublicKey
    let gate: ApprovalGate
    /// The biometry the device named, for a `biometry` gate.
    let biometry: DeviceBiometry?

    var method: AuthMethod {
        switch gate {
        case .biometry: biometry?.method ?? .user
        case .biometryOrPasscode: .user
        case .passphrase: .pin
        }
    }
}

/// The biometry a device names at enrollment.
enum DeviceBiometry: String, Sendable, CaseIterable {
    case faceID = "face_id"
    case touchID = "touch_id"
    case opticID = "optic_id"

    var method: AuthMethod {
        switch self {
        case .faceID: .face
        case .touchID: .fpt
        case .opticID: .iris
        }
    }
}

/// What each kind of factor holds.
enum FactorCredential: Sendable {
    /// A phone that receives codes by SMS, or hears them by voice.
    case phone(PhoneNumber)
    /// An authenticator app's secret, sealed at rest.
    case totp(TOTPSecret)
    /// A set of recovery codes (in their own table).
    case recoveryCodes
    /// P-256 keys on a device.
    case device(DeviceKeys)
    /// A WebAuthn credential.
    case passkey(Passkey)

    var kind: Factor.Kind {
        switch self {
        case .phone: .phone
        case .totp: .totp
        case .recoveryCodes: .recoveryCode
        case .device: .device
        case .passkey: .passkey
        }
    }

    var phone: PhoneNumber? {
        if case .phone(let number) = self { return number }
        return nil
    }
}

/// An authenticator app's parameters and its secret, sealed with AES-256-GCM
/// under the key file's key and bound to its factor id.
struct TOTPSecret: Sendable {
    let sealed: [UInt8]
    let algorithm: HMAC.Algorithm
    let digits: Int
}

/// A WebAuthn credential as stored: its id, COSE key, counter and flags.
struct Passkey: Sendable {
    /// base64url, as the browser names it.
    let credentialID: String
    let key: CredentialPublicKey
    let signCount: UInt32
    let transports: [String]
    let backupEligible: Bool
    let backedUp: Bool

    var descriptor: CredentialDescriptor {
        CredentialDescriptor(id: credentialID, transports: transports.isEmpty ? nil : transports)
    }
}

/// What a user presents: a code (or a device's signature), or a passkey's
/// assertion, parsed and checked as far as it can be before any transaction.
enum Proof: Sendable {
    case code(String)
    case assertion(credentialID: String, ParsedAssertion)
    /// A passkey assertion that failed its stateless checks (refused like a wrong code).
    case refusedAssertion(WebAuthnError)
}
