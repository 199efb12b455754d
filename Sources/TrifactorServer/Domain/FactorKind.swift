import Core

/// The kinds of second factor, as stored and on the wire.
enum FactorKind: String, StoredValue, CaseIterable {
    case phone
    case totp
    case recoveryCode = "recovery_code"
    case device
    case passkey

    /// The RFC 8176 method a session records when this kind is proven.
    var method: AuthMethod {
        switch self {
        case .phone: .sms
        case .totp: .otp
        case .recoveryCode: .lookup
        case .device, .passkey: .hwk
        }
    }

    /// Whether `POST /v1/mfa/enrollments` enrolls it (recovery codes are generated instead).
    var isEnrollable: Bool { self != .recoveryCode }

    /// Whether it counts as a second factor on its own (recovery codes only back the others up).
    var isStandalone: Bool { self != .recoveryCode }
}

extension AuthMethod: StoredValue {}
