import Foundation

/// `POST /v1/mfa/enrollments`.
public struct StartEnrollmentRequest: Codable, Sendable {
    /// `phone` or `totp`.
    public var kind: String
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
    enum CodingKeys: String, CodingKey { case kind, phone, country, algorithm, digits, publicKey = "public_key", deviceName = "device_name" }

    public init(kind: String, phone: String? = nil, country: String? = nil, algorithm: String? = nil, digits: Int? = nil,
                publicKey: String? = nil, deviceName: String? = nil) {
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
    public init(enrollmentSession: String = "", maskedPhone: String? = nil, secret: String? = nil, otpauthURI: String? = nil, qrSVG: String? = nil,
                challenge: String? = nil) {
        self.challenge = challenge
        self.enrollmentSession = enrollmentSession
        self.maskedPhone = maskedPhone
        self.secret = secret
        self.otpauthURI = otpauthURI
        self.qrSVG = qrSVG
    }
    enum CodingKeys: String, CodingKey {
        case enrollmentSession = "enrollment_session", maskedPhone = "masked_phone", secret, otpauthURI = "otpauth_uri", qrSVG = "qr_svg", challenge
    }
}

/// `POST /v1/mfa/enrollments/{enrollment_session}`: a `code`, or for a device a `signature`.
public struct FinishEnrollmentRequest: Codable, Sendable {
    public var code: String?
    public var signature: String?
    public var displayName: String?
    public init(code: String? = nil, signature: String? = nil, displayName: String? = nil) {
        self.code = code
        self.signature = signature
        self.displayName = displayName
    }
    enum CodingKeys: String, CodingKey { case code, signature, displayName = "display_name" }
}

/// An enrolled second factor.
public struct EnrolledFactor: Codable, Sendable, Equatable {
    public var enrollmentID: String
    public var kind: String
    public var displayName: String
    public var maskedPhone: String?
    public var enrolledAt: Date
    public var lastUsedAt: Date?
    public init(enrollmentID: String, kind: String, displayName: String, maskedPhone: String?, enrolledAt: Date, lastUsedAt: Date?) {
        self.enrollmentID = enrollmentID
        self.kind = kind
        self.displayName = displayName
        self.maskedPhone = maskedPhone
        self.enrolledAt = enrolledAt
        self.lastUsedAt = lastUsedAt
    }
    enum CodingKeys: String, CodingKey {
        case enrollmentID = "enrollment_id", kind, displayName = "display_name", maskedPhone = "masked_phone"
        case enrolledAt = "enrolled_at", lastUsedAt = "last_used_at"
    }
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
    public var kind: String
    public var displayName: String?
    public var maskedPhone: String?
    public init(enrollmentID: String, kind: String, displayName: String?, maskedPhone: String?) {
        self.enrollmentID = enrollmentID
        self.kind = kind
        self.displayName = displayName
        self.maskedPhone = maskedPhone
    }
    enum CodingKeys: String, CodingKey { case enrollmentID = "enrollment_id", kind, displayName = "display_name", maskedPhone = "masked_phone" }
}

/// 200 answer to a password sign-in of a user with second factors: no session yet.
public struct MFARequired: Codable, Sendable, Equatable {
    public var mfaRequired: Bool
    public var pendingCredential: String
    public var hints: [MFAHint]
    public init(pendingCredential: String, hints: [MFAHint]) {
        mfaRequired = true
        self.pendingCredential = pendingCredential
        self.hints = hints
    }
    enum CodingKeys: String, CodingKey { case mfaRequired = "mfa_required", pendingCredential = "pending_credential", hints }
}

/// `POST /v1/mfa/sign-in/challenges`.
public struct MFAChallengeRequest: Codable, Sendable {
    public var pendingCredential: String
    public var enrollmentID: String
    public init(pendingCredential: String, enrollmentID: String) {
        self.pendingCredential = pendingCredential
        self.enrollmentID = enrollmentID
    }
    enum CodingKeys: String, CodingKey { case pendingCredential = "pending_credential", enrollmentID = "enrollment_id" }
}

/// `POST /v1/sessions/mfa`.
public struct MFASignInRequest: Codable, Sendable {
    public var pendingCredential: String
    public var enrollmentID: String
    public var code: String
    public init(pendingCredential: String, enrollmentID: String, code: String) {
        self.pendingCredential = pendingCredential
        self.enrollmentID = enrollmentID
        self.code = code
    }
    enum CodingKeys: String, CodingKey { case pendingCredential = "pending_credential", enrollmentID = "enrollment_id", code }
}

/// `POST /v1/session/step-up`: without `code` it sends the challenge.
public struct StepUpRequest: Codable, Sendable {
    public var enrollmentID: String
    public var code: String?
    public init(enrollmentID: String, code: String? = nil) {
        self.enrollmentID = enrollmentID
        self.code = code
    }
    enum CodingKeys: String, CodingKey { case enrollmentID = "enrollment_id", code }
}

/// 202 answer to a challenge: it was sent (or nothing needed sending). For
/// a device key, what it must sign: see `DeviceSignature` in the README.
public struct ChallengeSent: Codable, Sendable, Equatable {
    /// Always `challenge_sent`.
    public var status: String
    public var challenge: String?
    public var purpose: String?
    public var actionHash: String?
    public init(challenge: String? = nil, purpose: String? = nil, actionHash: String? = nil) {
        status = "challenge_sent"
        self.challenge = challenge
        self.purpose = purpose
        self.actionHash = actionHash
    }
    enum CodingKeys: String, CodingKey { case status, challenge, purpose, actionHash = "action_hash" }
}
