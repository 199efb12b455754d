import Crypto
import Foundation
import TrifactorKit

/// A vault item sealed a second time, under its own Argon2id key from the
/// passphrase (the approval key's PKCS#8): it opens only with the passphrase
/// typed for that use, never with the vault's unlocked key. The Argon2id costs
/// are kept with it, so a vault made with other costs, or a process started
/// with other defaults, still opens it.
struct GatedKey: Codable {
    var salt: [UInt8]
    var sealed: [UInt8]
    /// Absent in keys sealed before the costs were recorded: those used the vault's.
    var opsLimit: UInt64?
    var memLimit: Int?

    /// The vault item name of `tag`'s gated key.
    static func itemName(_ tag: String) -> String { "\(tag).gated-key" }

    /// `secret` sealed under `passphrase` for the item `name`.
    static func seal(_ secret: SecureBytes, passphrase: SecureBytes, name: String, opsLimit: UInt64, memLimit: Int)
        throws(SecretStoreError) -> Data
    {
        let salt = SecureRandom.bytes(PassphraseSeal.saltBytes)
        let inner = try derive(passphrase, salt: salt, opsLimit: opsLimit, memLimit: memLimit)
        let sealed = PassphraseSeal.seal(secret, key: inner, associatedData: Array(name.utf8))
        guard
            let encoded = try? JSONEncoder().encode(
                GatedKey(salt: salt, sealed: sealed, opsLimit: opsLimit, memLimit: memLimit))
        else {
            throw .damaged("the key could not be encoded")
        }
        return encoded
    }

    /// The secret in the stored item `data` of `name`, or nil when `passphrase` does not open it.
    /// - Throws: `.damaged` when the item cannot be read.
    static func open(_ data: Data, passphrase: SecureBytes, name: String, vaultOpsLimit: UInt64, vaultMemLimit: Int)
        throws(SecretStoreError) -> SecureBytes?
    {
        guard let gated = try? JSONDecoder().decode(GatedKey.self, from: data) else {
            throw .damaged("the key named \(name) cannot be read")
        }
        let inner = try derive(
            passphrase, salt: gated.salt, opsLimit: gated.opsLimit ?? vaultOpsLimit,
            memLimit: gated.memLimit ?? vaultMemLimit)
        return try? PassphraseSeal.open(gated.sealed, key: inner, associatedData: Array(name.utf8))
    }

    private static func derive(_ passphrase: SecureBytes, salt: [UInt8], opsLimit: UInt64, memLimit: Int)
        throws(SecretStoreError) -> SecureBytes
    {
        do {
            return try PassphraseSeal.deriveKey(
                passphrase: passphrase, salt: salt, opsLimit: opsLimit, memLimit: memLimit)
        } catch {
            throw .damaged("its key derivation settings are not usable")
        }
    }
}
