import API
public import Foundation

/// The time, as the SDK reads it: the seam for presence-lock and approval
/// tests. `SystemClock` is the default.
public protocol TrifactorClock: Sendable {
    /// The current time.
    var now: Date { get }
}

/// The system's clock.
public struct SystemClock: TrifactorClock {
    public init() {}
    public var now: Date { Date() }
}

/// When a stored secret may be read.
public enum ItemProtection: Sendable, Equatable {
    /// Readable after the device was first unlocked since boot, never
    /// copied to another device (session tokens). On Linux: while the
    /// vault is unlocked.
    case afterFirstUnlockThisDeviceOnly
    /// Each read asks for the user's presence: biometrics or the device
    /// passcode (Keychain `.userPresence`). On Linux: the passphrase.
    case userPresence
    /// Each read asks for biometrics as enrolled now; enrolling another
    /// finger or face invalidates the item (Keychain `.biometryCurrentSet`).
    /// On Linux: the passphrase.
    case biometryCurrentSet
}

/// Why the secret store failed. A cancelled prompt is never "not found".
public enum SecretStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The user-presence prompt did not pass (cancelled, failed, locked out…).
    case presence(LocalAuthenticationError)
    /// The store is locked (the Linux vault) and may not prompt (`--no-input`).
    case locked
    /// The store's file or database is unreadable, damaged or changed by someone else.
    case damaged(String)
    /// The store's file may be read by others: refused, as ssh refuses keys.
    case exposed(path: String, fix: String)
    /// The platform refused with this status (Keychain `OSStatus`).
    case unexpected(status: Int32)
    /// This device has no Secure Enclave (or no secure key store): a device key cannot be made here.
    case noSecureHardware

    public var description: String {
        switch self {
        case .presence(let e): e.message
        case .locked: "The vault is locked: run `trifactor vault unlock`."
        case .damaged(let why): "The secure store cannot be read: \(why)."
        case .exposed(let path, let fix): "\(path) can be read by other users; run `\(fix)` first."
        case .unexpected(let status): "The secure store refused (status \(status))."
        case .noSecureHardware: "This device has no Secure Enclave, so it cannot hold a device key."
        }
    }
}

/// Where secrets live on the device (Keychain on Apple platforms, the
/// sealed vault file on Linux): set, read with a prompt, check without
/// prompting, remove.
public protocol SecretStore: Sendable {
    /// Stores `value` under `key`, replacing what was there.
    func set(_ value: Data, for key: String, protection: ItemProtection) async throws(SecretStoreError)
    /// The value under `key`, or nil when there is none. A protected item
    /// shows `prompt` in the presence check.
    /// - Throws: `.presence` when the check did not pass (never nil for a cancelled prompt).
    func get(_ key: String, prompt: String?) async throws(SecretStoreError) -> Data?
    /// Whether `key` holds a value, without prompting.
    func contains(_ key: String) async throws(SecretStoreError) -> Bool
    /// Removes `key`; removing nothing is fine.
    func remove(_ key: String) async throws(SecretStoreError)
}

/// The biometry a device offers.
public enum Biometry: String, Sendable, Equatable {
    case none, touchID, faceID, opticID
}

/// What a presence check accepts.
public enum PresencePolicy: Sendable, Equatable {
    /// Biometrics only (`.deviceOwnerAuthenticationWithBiometrics`).
    case biometrics
    /// Biometrics, or the device passcode as fallback (`.deviceOwnerAuthentication`).
    /// On Linux: the vault passphrase.
    case biometricsOrPasscode
}

/// The user-presence check: Touch ID / Face ID / Optic ID on Apple
/// platforms, the vault passphrase on Linux. Each `verify` is a fresh
/// prompt (a fresh `LAContext`).
public protocol UserPresence: Sendable {
    /// The biometry this device offers and has enrolled.
    var availableBiometry: Biometry { get }
    /// Whether a check with `policy` can be shown now, and if not why (ask before prompting).
    func readiness(for policy: PresencePolicy) -> PresenceReadiness
    /// Asks the user; returns when they passed.
    /// - Throws: the `LocalAuthenticationError` of the failure.
    func verify(reason: String, policy: PresencePolicy) async throws(LocalAuthenticationError)
}

/// A P-256 key that never leaves the device (the Secure Enclave on Apple
/// platforms, a sealed software key on Linux), identified by a tag.
public protocol DeviceKeyStore: Sendable {
    /// Creates the key `tag` (replacing none: fails if it exists) and returns
    /// its public key as SubjectPublicKeyInfo DER. With `releasedBy`, the
    /// platform itself releases the key for each signature only after that
    /// check (Secure Enclave `.biometryCurrentSet` for `.biometrics`,
    /// `.userPresence` for `.biometricsOrPasscode`; the vault's passphrase):
    /// no boolean in the app stands for the user.
    func createKey(tag: String, releasedBy: PresencePolicy?) async throws(SecretStoreError) -> Data
    /// What releases a key made with `releasedBy: policy` on this store, as the server is told.
    func gate(for policy: PresencePolicy) -> ApprovalGate
    /// The public key of `tag` (SubjectPublicKeyInfo DER), or nil.
    func publicKey(tag: String) async throws(SecretStoreError) -> Data?
    /// An ES256 signature (DER) over `message`; `reason` is shown if the key prompts.
    func sign(_ message: Data, tag: String, reason: String) async throws(SecretStoreError) -> Data
    /// Deletes `tag`.
    func deleteKey(tag: String) async throws(SecretStoreError)
}

/// A passkey authenticator (AuthenticationServices on Apple platforms),
/// speaking the WebAuthn JSON the server sends and takes.
public protocol PasskeyAuthenticator: Sendable {
    /// `navigator.credentials.create` with the server's options: the new credential's JSON.
    func create(_ options: CreationOptions) async throws -> CredentialJSON
    /// `navigator.credentials.get` with the server's options: the assertion's JSON.
    func get(_ options: RequestOptions) async throws -> CredentialJSON
}
