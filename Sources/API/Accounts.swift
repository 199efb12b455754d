public import Foundation

/// `POST /v1/accounts`.
public struct CreateAccountRequest: Codable, Sendable {
    public var email: String
    public var password: String
    public var displayName: String?
    /// The language of the account's messages (`de-de`, `ar`); the server's default when absent.
    public var locale: String?
    public init(email: String, password: String, displayName: String? = nil, locale: String? = nil) {
        self.email = email
        self.password = password
        self.displayName = displayName
        self.locale = locale
    }
    enum CodingKeys: String, CodingKey {
        case email, password
        case displayName = "display_name"
        case locale
    }
}

/// `PATCH /v1/account`: the language of the account's messages (null: the server's default).
public struct UpdateAccountRequest: Codable, Sendable {
    public var locale: String?
    public init(locale: String?) { self.locale = locale }
}

/// The answer to sign-up and resend: the same whether or not the email is known.
public struct VerificationSent: Codable, Sendable, Equatable {
    /// Always `verification_sent`.
    public var status: String
    public init() { status = "verification_sent" }
}

/// `POST /v1/accounts/verify-email`.
public struct VerifyEmailRequest: Codable, Sendable {
    public var email: String
    public var code: String
    public init(email: String, code: String) {
        self.email = email
        self.code = code
    }
}

/// `POST /v1/accounts/verify-email/resend`.
public struct ResendVerificationRequest: Codable, Sendable {
    public var email: String
    public init(email: String) { self.email = email }
}

/// The answer to a successful email verification.
public struct EmailVerified: Codable, Sendable, Equatable {
    /// Always `verified`.
    public var status: String
    public init() { status = "verified" }
}

/// A user as the API shows it.
public struct UserInfo: Codable, Sendable, Equatable {
    public var id: String
    public var email: String
    public var displayName: String?
    public var emailVerified: Bool
    public var createdAt: Date
    /// The language of the account's messages (nil: the server's default).
    public var locale: String?
    public init(
        id: String, email: String, displayName: String?, emailVerified: Bool, createdAt: Date, locale: String? = nil
    ) {
        self.id = id
        self.email = email
        self.displayName = displayName
        self.emailVerified = emailVerified
        self.createdAt = createdAt
        self.locale = locale
    }
    enum CodingKeys: String, CodingKey {
        case id, email
        case displayName = "display_name"
        case emailVerified = "email_verified"
        case createdAt = "created_at"
        case locale
    }
}

/// `POST /v1/account/password`.
public struct ChangePasswordRequest: Codable, Sendable {
    public var currentPassword: String
    public var newPassword: String
    public init(currentPassword: String, newPassword: String) {
        self.currentPassword = currentPassword
        self.newPassword = newPassword
    }
    enum CodingKeys: String, CodingKey {
        case currentPassword = "current_password"
        case newPassword = "new_password"
    }
}

/// `POST /v1/accounts/password-reset`: a reset code to the address, if it is an account's.
public struct PasswordResetRequest: Codable, Sendable {
    public var email: String
    public init(email: String) { self.email = email }
}

/// The answer to a password-reset request: the same for every address.
public struct PasswordResetSent: Codable, Sendable, Equatable {
    /// Always `reset_sent`.
    public var status: String
    public init() { status = "reset_sent" }
}

/// `POST /v1/accounts/password-reset/verify`: the code from the email.
public struct VerifyPasswordResetRequest: Codable, Sendable {
    public var email: String
    public var code: String
    public init(email: String, code: String) {
        self.email = email
        self.code = code
    }
}

/// The answer to a reset code that was right: the reset credential that
/// finishes the reset (shown once, 10 minutes to live), and the second
/// factors one of which must be proven first when the account has any.
public struct PasswordResetVerified: Codable, Sendable, Equatable {
    public var resetCredential: String
    public var expiresAt: Date
    public var secondFactorRequired: Bool
    public var hints: [MFAHint]
    public init(resetCredential: String, expiresAt: Date, secondFactorRequired: Bool, hints: [MFAHint]) {
        self.resetCredential = resetCredential
        self.expiresAt = expiresAt
        self.secondFactorRequired = secondFactorRequired
        self.hints = hints
    }
    enum CodingKeys: String, CodingKey {
        case resetCredential = "reset_credential"
        case expiresAt = "expires_at"
        case secondFactorRequired = "second_factor_required"
        case hints
    }
}

/// `POST /v1/accounts/password-reset/challenges`: send (or issue) the challenge of one of the account's factors.
public struct PasswordResetChallengeRequest: Codable, Sendable {
    public var resetCredential: String
    public var enrollmentID: String
    public init(resetCredential: String, enrollmentID: String) {
        self.resetCredential = resetCredential
        self.enrollmentID = enrollmentID
    }
    enum CodingKeys: String, CodingKey {
        case resetCredential = "reset_credential"
        case enrollmentID = "enrollment_id"
    }
}

/// `POST /v1/accounts/password-reset/complete`: the new password, with the
/// proof of a second factor when the account has one.
public struct CompletePasswordResetRequest: Codable, Sendable {
    public var resetCredential: String
    public var newPassword: String
    public var enrollmentID: String?
    /// The code, or a device's signature.
    public var code: String?
    /// A push approval granted on the device instead of a code.
    public var approvalID: String?
    /// A passkey's assertion instead of a code.
    public var assertion: CredentialJSON?
    public init(
        resetCredential: String, newPassword: String, enrollmentID: String? = nil, code: String? = nil,
        approvalID: String? = nil,
        assertion: CredentialJSON? = nil
    ) {
        self.resetCredential = resetCredential
        self.newPassword = newPassword
        self.enrollmentID = enrollmentID
        self.code = code
        self.approvalID = approvalID
        self.assertion = assertion
    }
    enum CodingKeys: String, CodingKey {
        case resetCredential = "reset_credential"
        case newPassword = "new_password"
        case enrollmentID = "enrollment_id"
        case code
        case approvalID = "approval_id"
        case assertion
    }
}

/// `PUT /v1/account/sitekey` and the answer of `GET` and `PUT`: the picture and phrase the user sees before typing
/// their password on a browser that was signed in with a second factor.
public struct SitekeyBody: Codable, Sendable, Equatable {
    /// One of the server's pictures (`anchor`, `owl`, …), served at `/sitekeys/NAME.svg`.
    public var picture: String
    /// 3 to 40 letters, digits, spaces and `.,!?'-`.
    public var phrase: String
    public init(picture: String, phrase: String) {
        self.picture = picture
        self.phrase = phrase
    }
}
