/// How the Keychain adapter writes one item: which `SecItem` call comes next, given the protection asked
/// for and each call's `OSStatus`. A plain value with no IO (the Apple adapter runs its steps in a loop), so
/// the order of calls is decided and tested here.
///
/// - An ungated item (`.afterFirstUnlockThisDeviceOnly`) is added, and updated in place if it exists, so a
///   failed write never loses the old value. The update goes through a context that may not prompt: if the item
///   there is gated (written earlier with presence), it answers "interaction not allowed" instead of showing a
///   sheet, and the plan deletes and adds it instead.
/// - A gated item (`.userPresence`, `.biometryCurrentSet`) is deleted, then added. `SecItemUpdate` on a gated
///   item asks for Face ID or the passcode with no reason on the sheet, for a write the user did not ask to
///   authorize; a delete never prompts. Before it, the device is checked (`blocker(for:readiness:)`) so the add
///   rarely fails after the delete.
/// - A gated item gets an ungated marker (`<key>.gated`) that remembers it existed (so one the system deleted
///   when the biometrics changed reads as `.keyInvalidated`, not as missing); an ungated write removes it.
public struct KeychainWritePlan: Sendable, Equatable {
    /// One `SecItem` call.
    public enum Step: Sendable, Equatable {
        /// `SecItemAdd` of the item with its value and protection.
        case add
        /// `SecItemUpdate` of the value in place, with a context that may not prompt (ungated items only).
        case updateWithoutPrompt
        /// `SecItemDelete` of the item.
        case delete
        /// `SecItemAdd` of the ungated marker.
        case addMarker
        /// `SecItemDelete` of the marker.
        case removeMarker
    }

    /// What to do next.
    public enum Action: Sendable, Equatable {
        /// Make this call and hand its status to `finished`.
        case run(Step)
        /// Written.
        case done
        /// Not written, for this reason.
        case fail(SecretStoreError)
    }

    /// The `OSStatus` values the plan tells apart.
    public enum Status {
        public static let success: Int32 = 0
        public static let duplicateItem: Int32 = -25299  // errSecDuplicateItem
        public static let itemNotFound: Int32 = -25300  // errSecItemNotFound
        public static let interactionNotAllowed: Int32 = -25308  // errSecInteractionNotAllowed
    }

    public let protection: ItemProtection
    private var deleted = false
    private var updated = false

    public init(protection: ItemProtection) { self.protection = protection }

    /// Whether reading the item asks for the user's presence.
    public var isGated: Bool { protection != .afterFirstUnlockThisDeviceOnly }

    /// The first call.
    public mutating func start() -> Action {
        if isGated {
            deleted = true
            return .run(.delete)
        }
        return .run(.add)
    }

    /// The call after `step` answered `status`.
    public mutating func finished(_ step: Step, status: Int32) -> Action {
        switch (step, status) {
        case (.delete, Status.success), (.delete, Status.itemNotFound):
            return .run(.add)
        case (.add, Status.success), (.updateWithoutPrompt, Status.success):
            return .run(isGated ? .addMarker : .removeMarker)
        case (.add, Status.duplicateItem) where !isGated && !updated && !deleted:
            updated = true
            return .run(.updateWithoutPrompt)
        case (.updateWithoutPrompt, Status.interactionNotAllowed) where !deleted:
            // The item there is gated: replace it rather than update it through a prompt.
            deleted = true
            return .run(.delete)
        case (.updateWithoutPrompt, Status.itemNotFound):
            return .run(.add)  // removed since the add saw it; a second duplicate then fails
        case (.addMarker, Status.success), (.addMarker, Status.duplicateItem),
            (.removeMarker, Status.success), (.removeMarker, Status.itemNotFound):
            return .done
        default:
            return .fail(Self.error(status: status))
        }
    }

    /// The presence checks to make before writing an item with `protection`, most basic first.
    public static func presenceChecks(for protection: ItemProtection) -> [PresencePolicy] {
        switch protection {
        case .afterFirstUnlockThisDeviceOnly: []
        case .userPresence: [.biometricsOrPasscode]
        case .biometryCurrentSet: [.biometricsOrPasscode, .biometrics]
        }
    }

    /// What stops the device from holding an item with `protection`, from its readiness for each of
    /// `presenceChecks(for:)` (`LAContext.canEvaluatePolicy`); nil when it can. Gated items need a device passcode
    /// (`kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly`); `.biometryCurrentSet` also needs biometry enrolled and
    /// usable by the app. A lockout stops nothing: the item can be made, and reading it later clears the lockout.
    public static func blocker(for protection: ItemProtection, readiness: (PresencePolicy) -> PresenceReadiness)
        -> SecretStoreError?
    {
        for policy in presenceChecks(for: protection) {
            switch readiness(policy).blocker {
            case .passcodeNotSet?: return .presence(.passcodeNotSet)
            case .biometryNotEnrolled? where policy == .biometrics: return .presence(.biometryNotEnrolled)
            case .biometryNotAvailable? where policy == .biometrics: return .presence(.biometryNotAvailable)
            default: continue
            }
        }
        return nil
    }

    /// A Keychain status as the store's error: a presence failure when it is one, else `.unexpected`.
    public static func error(status: Int32) -> SecretStoreError {
        LocalAuthenticationError(osStatus: status).map { .presence($0) } ?? .unexpected(status: status)
    }
}
