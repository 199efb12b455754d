import API
import Core

extension Factor {
    /// The kinds of second factor this server implements: a closed set, so every
    /// switch over it is exhaustive. Each is stored and sent as the API's
    /// `FactorKind` spells it (pinned by a test).
    enum Kind: String, StoredValue, CaseIterable {
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

        /// The kind on the wire.
        var wire: FactorKind { FactorKind(rawValue: rawValue) }

        /// The kind a request names, when this server implements it.
        init?(_ wire: FactorKind) { self.init(rawValue: wire.rawValue) }
    }
}

extension AuthMethod: StoredValue {}
