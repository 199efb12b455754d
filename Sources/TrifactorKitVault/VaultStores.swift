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

    /// The approval key's inner seal: its salt and the sealed PKCS#8.
    struct GatedKey: Codable {
        var salt: [UInt8]
        var sealed: [UInt8]
    }

    public func gate(for policy: PresencePolicy) -> ApprovalGate { .passphrase }

    public func createKey(tag: String, releasedBy: PresencePolicy?) async throws(SecretStoreError) -> Data {
        let names = try store.vault.names()
        guard !names.contains("\(tag).private-key"), !names.contains("\(tag).gated-key") else { throw .damaged("a key named \(tag) exists already") }
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
            let salt = SecureRandom.bytes(PassphraseSeal.saltBytes)
            let inner = try innerKey(passphrase, salt: salt)
            let sealed = PassphraseSeal.seal(pkcs8, key: inner, associatedData: Array("\(tag).gated-key".utf8))
            guard let encoded = try? JSONEncoder().encode(GatedKey(salt: salt, sealed: sealed)) else { throw .damaged("the key could not be encoded") }
            item = ("\(tag).gated-key", encoded)
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
        if try store.vault.names().contains("\(tag).gated-key") {
            // Released by the passphrase typed now, for this signature only.
            let passphrase = try await typedPassphrase(reason)
            guard let data = try await store.get("\(tag).gated-key", prompt: reason),
                  let gated = try? JSONDecoder().decode(GatedKey.self, from: data) else { throw .damaged("the key named \(tag) cannot be read") }
            do {
                raw = try PassphraseSeal.open(gated.sealed, key: try innerKey(passphrase, salt: gated.salt), associatedData: Array("\(tag).gated-key".utf8))
            } catch { throw .presence(.failed) }
        } else {
            guard let data = try await store.get("\(tag).private-key", prompt: reason) else { throw .damaged("no key named \(tag)") }
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
        do { passphrase = try await vault.ask(vault.exists ? "\(reason) (vault passphrase): " : "New vault passphrase: ", !vault.exists) } catch {
            throw .presence(error)
        }
        if vault.exists { try vault.verify(passphrase) } else { try vault.create(passphrase: passphrase) }
        return passphrase
    }

    private func innerKey(_ passphrase: SecureBytes, salt: [UInt8]) throws(SecretStoreError) -> SecureBytes {
        do { return try PassphraseSeal.deriveKey(passphrase: passphrase, salt: salt, opsLimit: store.vault.opsLimit, memLimit: store.vault.memLimit) } catch {
            throw .damaged("its key derivation settings are not usable")
        }
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
