internal import CSodium

/// libsodium must be initialised once before any other call; every entry
/// point of this module goes through `Sodium.ready`.
enum Sodium {
    /// Evaluated once, thread-safely (a `static let`), before the first use.
    static let ready: Void = {
        guard sodium_init() >= 0 else { fatalError("libsodium could not initialise (no entropy source?)") }
    }()
}
