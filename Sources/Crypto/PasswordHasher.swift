internal import CSodium
import Core

/// Argon2id password hashing through libsodium's `crypto_pwhash_str`. The
/// parameters travel inside the hash string (`$argon2id$v=19$m=…,t=…,p=1$…`),
/// so hashes made with older parameters still verify and can be upgraded.
package struct PasswordHasher: Sendable {
    /// Passes over memory (t).
    package let opsLimit: UInt64
    /// Memory in bytes (m).
    package let memLimit: Int

    /// Errors of hashing.
    package enum Failure: Error, Sendable {
        /// libsodium could not hash (out of memory for the configured memLimit).
        case outOfMemory
        /// Parameters outside libsodium's bounds.
        case invalidParameters
    }

    /// Defaults: 19 MiB and t=2 (OWASP's Argon2id minimum).
    package init(opsLimit: UInt64 = 2, memLimit: Int = 19 * 1024 * 1024) throws(Failure) {
        _ = Sodium.ready
        guard opsLimit >= UInt64(crypto_pwhash_opslimit_min()), opsLimit <= UInt64(crypto_pwhash_opslimit_max()),
            memLimit >= crypto_pwhash_memlimit_min(), memLimit <= min(crypto_pwhash_memlimit_max(), 4 << 30)
        else { throw .invalidParameters }
        self.opsLimit = opsLimit
        self.memLimit = memLimit
    }

    /// Hashes a (normalised) password with a fresh random salt.
    /// - Throws: `Failure.outOfMemory` when the memory cost cannot be allocated.
    package func hash(_ password: String) throws(Failure) -> String {
        var out = [CChar](repeating: 0, count: Int(crypto_pwhash_STRBYTES))
        let bytes = Self.cBytes(password)
        let rc = crypto_pwhash_str(&out, bytes, UInt64(bytes.count - 1), opsLimit, memLimit)
        guard rc == 0 else { throw .outOfMemory }
        return String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// True when `password` matches `hash`. Runs in time independent of where
    /// a mismatch lies; a malformed hash never matches.
    package func verify(_ password: String, hash: String) -> Bool {
        let bytes = Self.cBytes(password)
        return crypto_pwhash_str_verify(hash, bytes, UInt64(bytes.count - 1)) == 0
    }

    /// True when `hash` was made with parameters other than this hasher's
    /// (or is not an Argon2id hash), so it should be replaced after the next
    /// successful verification.
    package func needsRehash(_ hash: String) -> Bool {
        crypto_pwhash_str_needs_rehash(hash, opsLimit, memLimit) != 0
    }

    /// The password's UTF-8 bytes plus a terminating zero (so the buffer is
    /// never empty); the length passed to libsodium excludes the zero.
    private static func cBytes(_ password: String) -> [CChar] {
        password.utf8.map { CChar(bitPattern: $0) } + [0]
    }

    /// A hash of a random password, to verify against when an account does not
    /// exist, so that an unknown email costs the same time as a wrong password.
    package func decoyHash() -> String {
        (try? hash(Hex.encode(SecureRandom.bytes(16))))
            ?? "$argon2id$v=19$m=19456,t=2,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    }
}
