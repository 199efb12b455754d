/// How strongly the user proved who they are, as Trifactor's ID tokens say in `acr`, from weakest to strongest.
/// An app that needs a level asks for it (`acr_values`) and refuses a token below it.
public enum AuthenticationLevel: String, Sendable, Hashable, Comparable, CaseIterable, Codable {
    /// A password alone (`urn:trifactor:acr:password`).
    case password = "urn:trifactor:acr:password"
    /// A password and a second factor (`urn:trifactor:acr:mfa`).
    case multiFactor = "urn:trifactor:acr:mfa"
    /// A hardware-bound key released by the user's check: a passkey, or a device's approval key (`urn:trifactor:acr:hwk`).
    case hardwareKey = "urn:trifactor:acr:hwk"

    private var rank: Int {
        switch self {
        case .password: 0
        case .multiFactor: 1
        case .hardwareKey: 2
        }
    }

    /// Whether `lhs` is a weaker proof than `rhs`.
    public static func < (lhs: AuthenticationLevel, rhs: AuthenticationLevel) -> Bool { lhs.rank < rhs.rank }
}
