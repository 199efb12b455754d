/// The kind of a second factor, as the API names it (`kind` of an
/// enrollment, a factor and a sign-in hint): one vocabulary for the server
/// and its clients. Open on purpose: a client keeps working when a newer
/// server offers a kind it does not know (`rawValue` holds it). The strings
/// are a contract: never renamed (pinned by a test).
public struct FactorKind: RawRepresentable, Hashable, Sendable, Codable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }
    public var description: String { rawValue }

    /// A phone: a code by SMS, with a voice call that speaks it.
    public static let phone: FactorKind = "phone"
    /// An authenticator app (TOTP).
    public static let totp: FactorKind = "totp"
    /// The account's recovery codes.
    public static let recoveryCode: FactorKind = "recovery_code"
    /// A key on a device: push approvals with number matching, and its signatures.
    public static let device: FactorKind = "device"
    /// A WebAuthn passkey with user verification.
    public static let passkey: FactorKind = "passkey"

    /// Every kind this version of Trifactor knows.
    public static let known: [FactorKind] = [.phone, .totp, .recoveryCode, .device, .passkey]
}
