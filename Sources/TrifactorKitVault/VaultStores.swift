import Crypto
public import Foundation
public import TrifactorKit

/// `SecretStore` over the vault. Every item is sealed alike; reading any of
/// them needs the vault unlocked (the passphrase is Linux's presence check),
/// so `ItemProtection` levels all mean "while the vault is unlocked".
public struct VaultSecretStore: SecretStore {
    public let vault: Vault

    public init(vault: Vault) { self.vault = vault }

    public func set(_ value: Data, for key: String, protection: ItemProtection) async throws(SecretStoreError) {
        try await vault.update(prompt: "Vault passphrase: ") { $0[key] = value }
    }

    public func get(_ key: String, prompt: String?) async throws(SecretStoreError) -> Data? {
        guard try vault.names().contains(key) else { return nil }
        return try await vault.items(prompt: prompt.map { "\($0) (vault passphrase): " } ?? "Vault passphrase: ")[key]
    }

    public func contains(_ key: String) async throws(SecretStoreError) -> Bool { try vault.names().contains(key) }

    public func remove(_ key: String) async throws(SecretStoreError) {
        guard try vault.names().contains(key) else { return }
        try await vault.update(prompt: "Vault passphrase: ") { $0[key] = nil }
    }
}

/// A software P-256 device key (OpenSSL), its PKCS#8 sealed in the vault:
/// where no secure element exists, the passphrase guards it. A key made
/// `releasedBy` a presence policy (the approval key) is sealed a second time
/// under its own Argon2id key from the passphrase, so it opens only with
/// the passphrase typed for that signature: neither this process's unlocked
/// vault nor a `vault unlock --for` window releases it.
public struct SoftwareDeviceKeyStore: DeviceKeyStore {
    let store: VaultSecretStore

    public init(vault: Vault) { store = VaultSecretStore(vault: vault) }

    public func gate(for policy: PresencePolicy) -> ApprovalGate { .passphrase }

    public func createKey(tag: String, releasedBy: PresencePolicy?) async throws(SecretStoreError) -> Data {
        let names = try store.vault.names()
        guard !names.contains("\(tag).private-key"), !names.contains("\(tag).gated-key") else {
            throw .damaged("a key named \(tag) exists already")
        }
        // Biometrics only cannot be met by a passphrase: said before any key is made.
        if releasedBy == .biometrics { throw .presence(.biometryNotAvailable) }
        let key: P256SigningKey
        let pkcs8: SecureBytes
        do {
            key = try P256SigningKey.generate()
            pkcs8 = try key.pkcs8()
        } catch { throw .damaged("OpenSSL could not make a key (\(error))") }
        let publicKey = Data(key.subjectPublicKeyInfo)
        var item = (name: "\(tag).private-key", value: pkcs8.withUnsafeBytes { Data($0) })
        if releasedBy != nil {
            let passphrase = try await typedPassphrase("Guard this device's approvals with your vault passphrase")
            let name = GatedKey.itemName(tag)
            item = (
                name,
                try GatedKey.seal(
                    pkcs8, passphrase: passphrase, name: name, opsLimit: store.vault.opsLimit,
                    memLimit: store.vault.memLimit)
            )
        }
        let stored = item
        try await store.vault.update(prompt: "Vault passphrase: ") {
            $0[stored.name] = stored.value
            $0["\(tag).public-key"] = publicKey
        }
        return publicKey
    }

    public func publicKey(tag: String) async throws(SecretStoreError) -> Data? {
        try await store.get("\(tag).public-key", prompt: nil)
    }

    public func sign(_ message: Data, tag: String, reason: String) async throws(SecretStoreError) -> Data {
        let raw: SecureBytes
        let gatedName = GatedKey.itemName(tag)
        if try store.vault.names().contains(gatedName) {
            // Released by the passphrase typed now, for this signature only.
            let passphrase = try await typedPassphrase(reason)
            guard let data = try await store.get(gatedName, prompt: reason) else {
                throw .damaged("no key named \(tag)")
            }
            // The passphrase opened the vault just now, so a seal it cannot open is damage, not a typo.
            guard
                let opened = try GatedKey.open(
                    data, passphrase: passphrase, name: gatedName,
                    vaultOpsLimit: store.vault.opsLimit, vaultMemLimit: store.vault.memLimit)
            else {
                throw .damaged(
                    "the key named \(tag) does not open with the vault passphrase (it was sealed under an earlier one): "
                        + "remove this device's factor, forget the device (`trifactor device forget`) and add it again")
            }
            raw = opened
        } else {
            guard let data = try await store.get("\(tag).private-key", prompt: reason) else {
                throw .damaged("no key named \(tag)")
            }
            raw = SecureBytes(Array(data))
        }
        do {
            let key = try P256SigningKey(pkcs8: raw)
            return Data(try key.signature(for: Array(message)))
        } catch { throw .damaged("the key named \(tag) cannot sign (\(error))") }
    }

    public func deleteKey(tag: String) async throws(SecretStoreError) {
        let names = try store.vault.names()
        let items = ["\(tag).private-key", "\(tag).gated-key", "\(tag).public-key"]
        guard items.contains(where: names.contains) else { return }
        try await store.vault.update(prompt: "Vault passphrase: ") { vault in
            for name in items { vault[name] = nil }
        }
    }

    /// The vault's passphrase, typed now (a new vault is made with it when there is none), checked against the vault.
    private func typedPassphrase(_ reason: String) async throws(SecretStoreError) -> SecureBytes {
        let vault = store.vault
        let passphrase: SecureBytes
        do {
            passphrase = try await vault.ask(
                vault.exists ? "\(reason) (vault passphrase): " : "New vault passphrase: ", !vault.exists)
        } catch {
            throw .presence(error)
        }
        if vault.exists { try vault.verify(passphrase) } else { try vault.create(passphrase: passphrase) }
        return passphrase
    }

}

/// Linux's user-presence check: the vault passphrase (the device-passcode
/// analog; there is no biometry). Each `verify` asks, as a fresh `LAContext`
/// would; wrap it in a `PresenceLock` for a timeout policy. With
/// `honoursUnlockWindow`, an unlock the user made (`vault unlock --for 5m`)
/// is such a policy shared by processes: `verify` passes without asking
/// until it ends.
public struct PassphrasePresence: UserPresence {
    let vault: Vault
    let honoursUnlockWindow: Bool

    public init(vault: Vault, honoursUnlockWindow: Bool = false) {
        self.vault = vault
        self.honoursUnlockWindow = honoursUnlockWindow
    }

    public var availableBiometry: Biometry { .none }

    public func verify(reason: String, policy: PresencePolicy) async throws(LocalAuthenticationError) {
        // Biometrics only cannot be met by a passphrase.
        if policy == .biometrics { throw .biometryNotAvailable }
        if honoursUnlockWindow, vault.unlockedUntil() != nil { return }
        let passphrase = try await vault.ask("\(reason): vault passphrase: ", false)
        do { try vault.verify(passphrase) } catch {
            if case .presence(let e) = error { throw e }
            throw .failed
        }
    }
}
