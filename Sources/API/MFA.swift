public import Foundation

/// `POST /v1/mfa/enrollments`.
public struct StartEnrollmentRequest: Codable, Sendable {
    /// `phone`, `totp`, `device` or `passkey`.
    public var kind: FactorKind
    /// For phone: E.164 (`+447400123456`) or a national number with `country`.
    public var phone: String?
    /// ISO 3166 region of a national `phone` (`US`, `GB`).
    public var country: String?
    /// For totp: `SHA1` (default), `SHA256` or `SHA512`.
    public var algorithm: String?
    /// For totp: 6 (default) or 8.
    public var digits: Int?
    /// For device: the P-256 public key, SubjectPublicKeyInfo DER in base64.
    public var publicKey: String?
    /// For device: a name the user recognises (`Ann's iPhone`).
    public var deviceName: String?
    /// For device: a second P-256 key (SubjectPublicKeyInfo DER, base64) that the
    /// device releases only after the user's check, used only for approvals,
    /// step-up and bound actions. Without it the factor is not approval-bound.
    public var approvalKey: String?
    /// For device with `approval_key`: what releases it (an `ApprovalGate` raw value).
    public var approvalKeyGate: String?
    /// For device with a `biometry` gate: `face_id`, `touch_id` or `optic_id` (for `amr`).
    public var biometry: String?
    enum CodingKeys: String, CodingKey {
        case kind, phone, country, algorithm, digits
        case publicKey = "public_key"
        case deviceName = "device_name"
        case approvalKey = "approval_key"
        case approvalKeyGate = "approval_key_gate"
        case biometry
    }

    public init(
        kind: FactorKind, phone: String? = nil, country: String? = nil, algorithm: String? = nil, digits: Int? = nil,
        publicKey: String? = nil, deviceName: String? = nil, approvalKey: String? = nil, approvalKeyGate: String? = nil,
        biometry: String? = nil
    ) {
        self.approvalKey = approvalKey
        self.approvalKeyGate = approvalKeyGate
        self.biometry = biometry
        self.publicKey = publicKey
        self.deviceName = deviceName
        self.kind = kind
        self.phone = phone
        self.country = country
        self.algorithm = algorithm
        self.digits = digits
    }
}

/// 202 answer to an enrollment start.
public struct EnrollmentStarted: Codable, Sendable, Equatable {
    public var enrollmentSession: String
    public var maskedPhone: String?
    public var secret: String?
    public var otpauthURI: String?
    public var qrSVG: String?
    /// For device: the challenge to sign (base64url).
    public var challenge: String?
    /// For passkey: the options for `navigator.credentials.create`.
    public var options: CreationOptions?
    public init(
        enrollmentSession: String = "", maskedPhone: String? = nil, secret: String? = nil, otpauthURI: String? = nil,
        qrSVG: String? = nil,
        challenge: String? = nil, options: CreationOptions? = nil
    ) {
        self.challenge = challenge
        self.options = options
        self.enrollmentSession = enrollmentSession
        self.maskedPhone = maskedPhone
        self.secret = secret
        self.otpauthURI = otpauthURI
        self.qrSVG = qrSVG
    }
    enum CodingKeys: String, CodingKey {
        case enrollmentSession = "enrollment_session"
        case maskedPhone = "masked_phone"
        case secret
        case otpauthURI = "otpauth_uri"
        case qrSVG = "qr_svg"
        case challenge, options
    }
}

/// `POST /v1/mfa/enrollments/{enrollment_session}`: a `code`, or for a device a `signature`.
public struct FinishEnrollmentRequest: Codable, Sendable {
    public var code: String?
    public var signature: String?
    /// For a device with an approval key: that key's signature over the same challenge (purpose `enroll`, action `approval-key`).
    public var approvalSignature: String?
    /// For passkey: the browser's credential.
    public var credential: CredentialJSON?
    public var displayName: String?
    public init(
        code: String? = nil, signature: String? = nil, approvalSignature: String? = nil, displayName: String? = nil
    ) {
        self.code = code
        self.signature = signature
        self.approvalSignature = approvalSignature
        self.displayName = displayName
    }
    enum CodingKeys: String, CodingKey {
        case code, signature
        case approvalSignature = "approval_signature"
        case credential
        case displayName = "display_name"
    }
}

/// An enrolled second factor.
public struct EnrolledFactor: Codable, Sendable, Equatable {
    public var enrollmentID: String
    public var kind: FactorKind
    public var displayName: String
    public var maskedPhone: String?
    public var enrolledAt: Date
    public var lastUsedAt: Date?
    /// Recovery codes: how many of the set are still unused.
    public var codesLeft: Int?
    /// Devices: whether approvals are signed by a key the device releases only
    /// after the user's check (false for a device enrolled without one).
    public var approvalBound: Bool?
    /// Devices with `approval_bound`: what releases the approval key (an `ApprovalGate` raw value).
    public var approvalGate: String?
    public init(
        enrollmentID: String, kind: FactorKind, displayName: String, maskedPhone: String?, enrolledAt: Date,
        lastUsedAt: Date?,
        codesLeft: Int? = nil, approvalBound: Bool? = nil, approvalGate: String? = nil
    ) {
        self.codesLeft = codesLeft
        self.approvalBound = approvalBound
        self.approvalGate = approvalGate
        self.enrollmentID = enrollmentID
        self.kind = kind
        self.displayName = displayName
        self.maskedPhone = maskedPhone
        self.enrolledAt = enrolledAt
        self.lastUsedAt = lastUsedAt
    }
    enum CodingKeys: String, CodingKey {
        case enrollmentID = "enrollment_id"
        case kind
        case displayName = "display_name"
        case maskedPhone = "masked_phone"
        case enrolledAt = "enrolled_at"
        case lastUsedAt = "last_used_at"
        case codesLeft = "codes_left"
        case approvalBound = "approval_bound"
        case approvalGate = "approval_gate"
    }
}

/// What releases a device's approval key, as the device declares it at
/// enrollment (the server cannot see the device's hardware: it records the
/// claim, checks the key, and reports the gate in `amr`).
public enum ApprovalGate: String, Codable, Sendable, CaseIterable {
    /// Biometrics as enrolled now (Secure Enclave `.biometryCurrentSet`): a new face or finger invalidates the key.
    case biometry
    /// Biometrics or the device passcode (Secure Enclave `.userPresence`).
    case biometryOrPasscode = "biometry_or_passcode"
    /// A passphrase typed for each use (the Linux vault).
    case passphrase
}

/// `GET /v1/mfa/enrollments`.
public struct EnrolledFactors: Codable, Sendable, Equatable {
    public var enrollments: [EnrolledFactor]
    public init(enrollments: [EnrolledFactor]) { self.enrollments = enrollments }
}

/// `POST /v1/mfa/recovery-codes`: shown once.
public struct RecoveryCodes: Codable, Sendable, Equatable {
    public var codes: [String]
    public init(codes: [String]) { self.codes = codes }
}

/// A second factor the user can pick at sign-in.
public struct MFAHint: Codable, Sendable, Equatable {
    public var enrollmentID: String
    public var kind: FactorKind
    public var displayName: String?
    public var maskedPhone: String?
    public init(enrollmentID: String, kind: FactorKind, displayName: String?, maskedPhone: String?) {
        self.enrollmentID = enrollmentID
        self.kind = kind
        self.displayName = displayName
        self.maskedPhone = maskedPhone
    }
    enum CodingKeys: String, CodingKey {
        case enrollmentID = "enrollment_id"
        case kind
        case displayName = "display_name"
        case maskedPhone = "masked_phone"
    }
}

/// 200 answer to a password sign-in of a user with second factors: no session yet.
public struct MFARequired: Codable, Sendable, Equatable {
    public var mfaRequired: Bool
    public var pendingCredential: String
    public var hints: [MFAHint]
    /// When the pending credential dies (5 minutes after the password).
    public var expiresAt: Date?
    public init(pendingCredential: String, hints: [MFAHint], expiresAt: Date? = nil) {
        mfaRequired = true
        self.pendingCredential = pendingCredential
        self.hints = hints
        self.expiresAt = expiresAt
    }
    enum CodingKeys: String, CodingKey {
        case mfaRequired = "mfa_required"
        case pendingCredential = "pending_credential"
        case hints
        case expiresAt = "expires_at"
    }
}

/// `POST /v1/mfa/sign-in/challenges`.
public struct MFAChallengeRequest: Codable, Sendable {
    public var pendingCredential: String
    public var enrollmentID: String
    public init(pendingCredential: String, enrollmentID: String) {
        self.pendingCredential = pendingCredential
        self.enrollmentID = enrollmentID
    }
    enum CodingKeys: String, CodingKey {
        case pendingCredential = "pending_credential"
        case enrollmentID = "enrollment_id"
    }
}

/// `POST /v1/sessions/mfa`.
public struct MFASignInRequest: Codable, Sendable {
    public var pendingCredential: String
    public var enrollmentID: String
    /// The code, or a device's signature.
    public var code: String?
    /// A push approval granted on the device instead of a code.
    public var approvalID: String?
    /// A passkey's assertion instead of a code.
    public var assertion: CredentialJSON?
    public init(pendingCredential: String, enrollmentID: String, code: String? = nil, approvalID: String? = nil) {
        self.pendingCredential = pendingCredential
        self.enrollmentID = enrollmentID
        self.code = code
        self.approvalID = approvalID
    }
    enum CodingKeys: String, CodingKey {
        case pendingCredential = "pending_credential"
        case enrollmentID = "enrollment_id"
        case code
        case approvalID = "approval_id"
        case assertion
    }
}

/// `POST /v1/session/step-up`: without `code` it sends the challenge.
public struct StepUpRequest: Codable, Sendable {
    public var enrollmentID: String
    public var code: String?
    /// A passkey's assertion instead of a code.
    public var assertion: CredentialJSON?
    public init(enrollmentID: String, code: String? = nil) {
        self.enrollmentID = enrollmentID
        self.code = code
    }
    enum CodingKeys: String, CodingKey {
        case enrollmentID = "enrollment_id"
        case code, assertion
    }
}

/// 202 answer to a challenge: it was sent (or nothing needed sending). For
/// a device key, what it must sign: see "Device keys" in docs/api/second-factors.md.
public struct ChallengeSent: Codable, Sendable, Equatable {
    /// Always `challenge_sent`.
    public var status: String
    public var challenge: String?
    public var purpose: String?
    public var actionHash: String?
    /// Push approval: its id and the number the browser shows, which the user picks on the device.
    public var approvalID: String?
    public var number: Int?
    /// For passkey: the options for `navigator.credentials.get`.
    public var options: RequestOptions?
    public init(
        challenge: String? = nil, purpose: String? = nil, actionHash: String? = nil, approvalID: String? = nil,
        number: Int? = nil
    ) {
        self.approvalID = approvalID
        self.number = number
        status = "challenge_sent"
        self.challenge = challenge
        self.purpose = purpose
        self.actionHash = actionHash
    }
    enum CodingKeys: String, CodingKey {
        case status, challenge, purpose
        case actionHash = "action_hash"
        case approvalID = "approval_id"
        case number, options
    }
}

/// `PATCH /v1/mfa/enrollments/{id}`: a factor's new name.
public struct RenameFactorRequest: Codable, Sendable {
    public var displayName: String?
    public init(displayName: String?) { self.displayName = displayName }
    enum CodingKeys: String, CodingKey { case displayName = "display_name" }
}
