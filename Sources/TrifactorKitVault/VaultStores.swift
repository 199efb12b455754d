import Crypto
import Foundation
import TrifactorKit

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
/// where no secure element exists, the passphrase guards it.
public struct SoftwareDeviceKeyStore: DeviceKeyStore {
    let store: VaultSecretStore

    public init(vault: Vault) { store = VaultSecretStore(vault: vault) }

    public func createKey(tag: String, requiresPresence: Bool) async throws(SecretStoreError) -> Data {
        guard try await !store.contains("\(tag).private-key") else { throw .damaged("a key named \(tag) exists already") }
        let key: P256SigningKey
        let pkcs8: SecureBytes
        do {
            key = try P256SigningKey.generate()
            pkcs8 = try key.pkcs8()
        } catch { throw .damaged("OpenSSL could not make a key (\(error))") }
        let publicKey = Data(key.subjectPublicKeyInfo)
        let privateBytes = pkcs8.withUnsafeBytes { Data($0) }
        try await store.vault.update(prompt: "Vault passphrase: ") {
            $0["\(tag).private-key"] = privateBytes
            $0["\(tag).public-key"] = publicKey
        }
        return publicKey
    }

    public func publicKey(tag: String) async throws(SecretStoreError) -> Data? {
        try await store.get("\(tag).public-key", prompt: nil)
    }

    public func sign(_ message: Data, tag: String, reason: String) async throws(SecretStoreError) -> Data {
        guard let raw = try await store.get("\(tag).private-key", prompt: reason) else { throw .damaged("no key named \(tag)") }
        do {
            let key = try P256SigningKey(pkcs8: SecureBytes(Array(raw)))
            return Data(try key.signature(for: Array(message)))
        } catch { throw .damaged("the key named \(tag) cannot sign (\(error))") }
    }

    public func deleteKey(tag: String) async throws(SecretStoreError) {
        let names = try store.vault.names()
        guard names.contains("\(tag).private-key") || names.contains("\(tag).public-key") else { return }
        try await store.vault.update(prompt: "Vault passphrase: ") {
            $0["\(tag).private-key"] = nil
            $0["\(tag).public-key"] = nil
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
