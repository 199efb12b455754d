import Foundation

/// Where the "this installation has run" flag lives: storage that, unlike the Keychain, is deleted with the
/// app (`UserDefaults` on iOS). The seam lets the decision be tested with a fake.
public protocol InstallFlagStore: Sendable {
    /// Whether the flag is set.
    func isSet(_ key: String) -> Bool
    /// Sets the flag.
    func set(_ key: String)
}

/// The flag in `UserDefaults`: the standard defaults, or a suite (an app group shared with extensions).
public struct UserDefaultsInstallFlag: InstallFlagStore {
    public let suiteName: String?

    public init(suiteName: String? = nil) { self.suiteName = suiteName }

    // A `UserDefaults` is made per call (not kept): it is cheap, and the struct stays Sendable on every platform.
    private var defaults: UserDefaults { suiteName.flatMap(UserDefaults.init(suiteName:)) ?? .standard }

    public func isSet(_ key: String) -> Bool { defaults.bool(forKey: key) }

    public func set(_ key: String) { defaults.set(true, forKey: key) }
}

/// Clears the app's secrets on the first launch after a reinstall. On iOS, Keychain items outlive the app:
/// a user who deleted the app (to sign out, or to sell the phone) and installs it again would otherwise find
/// the old session, device key and gated secrets still there. `UserDefaults` go with the app, so a missing
/// flag means a fresh install and the Keychain is cleared before anything reads it.
///
/// - Important: Call it at launch before any read of the secret store, with
///   `UIApplication.shared.isProtectedDataAvailable`. An app launched before the first unlock since boot (a
///   prewarmed or background launch) reads its `UserDefaults` as empty, and clearing then would sign out every
///   such user; so an unset flag decides nothing until protected data is available.
public struct ReinstallGuard: Sendable {
    /// What the launch found.
    public enum Decision: Sendable, Equatable {
        /// A fresh install: clear the secrets, then set the flag.
        case clear
        /// The flag is set: the same installation as before.
        case keep
        /// The flag reads as unset but protected data is not available: decide on a later launch or call.
        case wait
    }

    public let flags: any InstallFlagStore
    public let key: String

    public init(flags: any InstallFlagStore = UserDefaultsInstallFlag(), key: String = "trifactor.installed") {
        self.flags = flags
        self.key = key
    }

    /// The decision itself. A set flag is never a misreading (defaults read before the first unlock come back
    /// empty, not set), so it keeps whatever else holds.
    public static func decide(flagSet: Bool, protectedDataAvailable: Bool) -> Decision {
        if flagSet { return .keep }
        return protectedDataAvailable ? .clear : .wait
    }

    /// Decides, and on `.clear` runs `clear` (the Keychain store's `removeAll()`) and only then sets the flag,
    /// so a clear that failed is tried again on the next launch.
    /// - Throws: what `clear` threw; the flag stays unset.
    @discardableResult
    public func clearIfReinstalled(protectedDataAvailable: Bool, clear: () async throws -> Void) async rethrows
        -> Decision
    {
        let decision = Self.decide(flagSet: flags.isSet(key), protectedDataAvailable: protectedDataAvailable)
        if decision == .clear {
            try await clear()
            flags.set(key)
        }
        return decision
    }
}
