import Crypto
import Synchronization

/// Password hashing as the services need it: hash, verify, whether a hash
/// should be upgraded, and a decoy hash to verify against when an email is
/// unknown (so that costs the same Argon2id work as a wrong password). The
/// live value is Argon2id; the decoy is made on first use, not at start-up.
struct PasswordHashing: Sendable {
    let hash: @Sendable (String) throws -> String
    let verify: @Sendable (_ password: String, _ hash: String) -> Bool
    let needsRehash: @Sendable (String) -> Bool
    let decoy: @Sendable () -> String

    /// Argon2id (libsodium) with these parameters.
    /// - Throws: `PasswordHasher.Failure.invalidParameters` for parameters outside libsodium's bounds.
    static func argon2id(opsLimit: UInt64, memoryKiB: Int) throws -> PasswordHashing {
        let hasher = try PasswordHasher(opsLimit: opsLimit, memLimit: memoryKiB * 1024)
        let decoy = Mutex<String?>(nil)
        return PasswordHashing(
            hash: { try hasher.hash($0) },
            verify: { hasher.verify($0, hash: $1) },
            needsRehash: { hasher.needsRehash($0) },
            decoy: {
                decoy.withLock { cached in
                    if let cached { return cached }
                    let made = hasher.decoyHash()
                    cached = made
                    return made
                }
            })
    }
}
