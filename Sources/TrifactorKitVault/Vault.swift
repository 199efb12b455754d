public import Crypto
public import Foundation
import Synchronization
public import TrifactorKit

/// Asks the user for the vault passphrase (the terminal, a GUI, a test):
/// `confirm` asks twice, for a new one. Throws `.interactionNotAllowed`
/// when it may not ask (`--no-input`), `.userCancel` on end of input.
public typealias PassphraseSource =
    @Sendable (_ prompt: String, _ confirm: Bool) async throws(LocalAuthenticationError) -> SecureBytes

/// Trifactor's local vault on Linux: one file under
/// `$XDG_DATA_HOME/trifactor/` (directory 0700, file 0600, refused when
/// group or others may read it, as ssh refuses keys) holding the device key,
/// TOTP secrets and session tokens, sealed with libsodium: a key derived
/// from the passphrase with Argon2id, then XChaCha20-Poly1305. Item names
/// are in the clear (so `contains` needs no passphrase) and bound to the
/// sealed data. `unlock(for:)` keeps the derived key in a 0600 file under
/// `$XDG_RUNTIME_DIR` (memory-backed, gone at logout) until it expires,
/// as sudo keeps its timestamp.
public final class Vault: Sendable {
    /// The vault file.
    public let url: URL
    /// Where an unlock is remembered, or nil (no `$XDG_RUNTIME_DIR`).
    public let unlockURL: URL?
    let ask: PassphraseSource
    let clock: any TrifactorClock
    let opsLimit: UInt64
    let memLimit: Int
    /// The key derived in this process, so one run prompts once.
    private let key = Mutex<SecureBytes?>(nil)

    static let format = "trifactor-vault-1"
    static let checkText = Array("trifactor vault passphrase check".utf8)

    /// - Parameters:
    ///   - directory: the vault's folder; `Vault.defaultDirectory()` by default.
    ///   - profile: the vault's name (`default.vault`).
    ///   - opsLimit, memLimit: Argon2id costs for a new vault (libsodium's moderate limits by default).
    public init(
        directory: URL = Vault.defaultDirectory(), profile: String = "default",
        runtimeDirectory: URL? = Vault.runtimeDirectory(),
        clock: any TrifactorClock = SystemClock(), opsLimit: UInt64 = 3, memLimit: Int = 256 << 20,
        ask: @escaping PassphraseSource
    ) {
        url = directory.appendingPathComponent("\(profile).vault")
        unlockURL = runtimeDirectory?.appendingPathComponent("\(profile).unlock")
        self.ask = ask
        self.clock = clock
        self.opsLimit = opsLimit
        self.memLimit = memLimit
    }

    /// `$XDG_DATA_HOME/trifactor`, or `~/.local/share/trifactor`.
    public static func defaultDirectory(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        let base =
            environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share")
        return base.appendingPathComponent("trifactor")
    }

    /// `$XDG_RUNTIME_DIR/trifactor`, or nil when the session has none (then unlocks last one process).
    public static func runtimeDirectory(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> URL? {
        environment["XDG_RUNTIME_DIR"].flatMap {
            $0.isEmpty ? nil : URL(fileURLWithPath: $0).appendingPathComponent("trifactor")
        }
    }

    /// Whether the vault file exists.
    public var exists: Bool { FileManager.default.fileExists(atPath: url.path) }

    /// Creates an empty vault under a new passphrase.
    /// - Throws: `SecretStoreError` when one exists already or the folder cannot be made private.
    public func create(passphrase: SecureBytes) throws(SecretStoreError) {
        guard !exists else { throw .damaged("a vault exists already at \(url.path)") }
        let salt = SecureRandom.bytes(PassphraseSeal.saltBytes)
        let derived = try derive(passphrase, salt: salt, opsLimit: opsLimit, memLimit: memLimit)
        let header = Header(
            format: Self.format, salt: salt, opsLimit: opsLimit, memLimit: memLimit, names: [], check: [], sealed: [])
        try write([:], header: header, key: derived)
        key.withLock { $0 = derived }
    }

    /// Unlocks for `duration` seconds (asking for the passphrase if needed): other processes of this user skip the prompt meanwhile.
    public func unlock(for duration: TimeInterval) async throws(SecretStoreError) {
        let derived = try await unlockedKey(prompt: "Vault passphrase: ")
        guard let unlockURL else { return }
        let until = clock.now.addingTimeInterval(duration)
        let record = UnlockRecord(
            until: until.timeIntervalSince1970, key: derived.withUnsafeBytes { Data($0).base64EncodedString() })
        try writePrivate(try encode(record), to: unlockURL)
    }

    /// Forgets every unlock: the next use asks for the passphrase.
    public func lock() {
        key.withLock { $0 = nil }
        if let unlockURL { try? FileManager.default.removeItem(at: unlockURL) }
    }

    /// Until when an `unlock(for:)` holds, or nil when locked.
    public func unlockedUntil() -> Date? {
        guard let record = try? readUnlock() else { return nil }
        return Date(timeIntervalSince1970: record.until)
    }

    /// Changes the passphrase: every item is sealed again under the new key, and
    /// each item sealed under the passphrase itself (an approval key) under the new passphrase.
    /// An approval key that the old passphrase does not open (sealed under an earlier one by a
    /// release that did not re-seal it) is kept as it is: changing a passphrase is never refused
    /// for it, and signing with it says how to replace it.
    public func changePassphrase(old: SecureBytes, new: SecureBytes) throws(SecretStoreError) {
        let header = try readHeader()
        let oldKey = try derive(old, salt: header.salt, opsLimit: header.opsLimit, memLimit: header.memLimit)
        var items = try open(header, key: oldKey)
        for (name, data) in items where name.hasSuffix(GatedKey.itemName("")) {
            guard
                let secret = try GatedKey.open(
                    data, passphrase: old, name: name, vaultOpsLimit: header.opsLimit, vaultMemLimit: header.memLimit)
            else {
                continue
            }
            items[name] = try GatedKey.seal(secret, passphrase: new, name: name, opsLimit: opsLimit, memLimit: memLimit)
        }
        let salt = SecureRandom.bytes(PassphraseSeal.saltBytes)
        let newKey = try derive(new, salt: salt, opsLimit: opsLimit, memLimit: memLimit)
        try write(
            items,
            header: Header(
                format: Self.format, salt: salt, opsLimit: opsLimit, memLimit: memLimit, names: [], check: [],
                sealed: []),
            key: newKey)
        lock()
        key.withLock { $0 = newKey }
    }

    /// The item names, read without the passphrase.
    public func names() throws(SecretStoreError) -> [String] { exists ? try readHeader().names : [] }

    /// Checks the passphrase: for the presence check.
    func verify(_ passphrase: SecureBytes) throws(SecretStoreError) {
        let header = try readHeader()
        let derived = try derive(passphrase, salt: header.salt, opsLimit: header.opsLimit, memLimit: header.memLimit)
        try checkKey(derived, header)
        key.withLock { $0 = derived }
    }

    /// Whether no prompt is needed: this process derived the key, or an unlock holds.
    public var isUnlocked: Bool { key.withLock { $0 != nil } || unlockedUntil() != nil }

    // MARK: Items

    func items(prompt: String) async throws(SecretStoreError) -> [String: Data] {
        guard exists else { return [:] }
        let derived = try await unlockedKey(prompt: prompt)
        return try open(try readHeader(), key: derived)
    }

    func update(prompt: String, _ change: @Sendable (inout [String: Data]) -> Void) async throws(SecretStoreError) {
        if !exists {
            let passphrase: SecureBytes
            do { passphrase = try await ask("New vault passphrase: ", true) } catch { throw .presence(error) }
            try create(passphrase: passphrase)
        }
        let derived = try await unlockedKey(prompt: prompt)
        let header = try readHeader()
        var items = try open(header, key: derived)
        change(&items)
        try write(items, header: header, key: derived)
    }

    // MARK: Internals

    struct Header: Codable {
        var format: String
        var salt: [UInt8]
        var opsLimit: UInt64
        var memLimit: Int
        var names: [String]
        var check: [UInt8]
        var sealed: [UInt8]
    }

    struct UnlockRecord: Codable {
        var until: TimeInterval
        var key: String
    }

    func unlockedKey(prompt: String) async throws(SecretStoreError) -> SecureBytes {
        if let derived = key.withLock({ $0 }) { return derived }
        if let record = try readUnlock(), let raw = Data(base64Encoded: record.key) {
            let derived = SecureBytes(Array(raw))
            if (try? checkKey(derived, try readHeader())) != nil { return derived }
        }
        guard exists else { throw .locked }
        let passphrase: SecureBytes
        do { passphrase = try await ask(prompt, false) } catch { throw .presence(error) }
        try verify(passphrase)
        return key.withLock { $0! }
    }

    private func readUnlock() throws(SecretStoreError) -> UnlockRecord? {
        guard let unlockURL, FileManager.default.fileExists(atPath: unlockURL.path) else { return nil }
        try Self.refuseExposed(unlockURL)
        guard let data = try? Data(contentsOf: unlockURL),
            let record = try? JSONDecoder().decode(UnlockRecord.self, from: data)
        else { return nil }
        guard record.until > clock.now.timeIntervalSince1970 else {
            try? FileManager.default.removeItem(at: unlockURL)
            return nil
        }
        return record
    }

    private func derive(_ passphrase: SecureBytes, salt: [UInt8], opsLimit: UInt64, memLimit: Int)
        throws(SecretStoreError) -> SecureBytes
    {
        do {
            return try PassphraseSeal.deriveKey(
                passphrase: passphrase, salt: salt, opsLimit: opsLimit, memLimit: memLimit)
        } catch {
            throw .damaged("its key derivation settings are not usable")
        }
    }

    private func checkKey(_ derived: SecureBytes, _ header: Header) throws(SecretStoreError) {
        do {
            _ = try PassphraseSeal.open(
                header.check, key: derived, associatedData: Array(Self.format.utf8) + header.salt)
        } catch {
            throw .presence(.failed)
        }
    }

    private func associatedData(_ header: Header) -> [UInt8] {
        Array("\(Self.format)\n\(header.opsLimit)\n\(header.memLimit)\n\(header.names.joined(separator: "\n"))".utf8)
            + header.salt
    }

    private func open(_ header: Header, key derived: SecureBytes) throws(SecretStoreError) -> [String: Data] {
        try checkKey(derived, header)
        let plain: SecureBytes
        do {
            plain = try PassphraseSeal.open(header.sealed, key: derived, associatedData: associatedData(header))
        } catch {
            throw .damaged("\(url.path) was changed by something other than trifactor")
        }
        guard let items = plain.withUnsafeBytes({ try? JSONDecoder().decode([String: Data].self, from: Data($0)) }),
            Set(items.keys) == Set(header.names)
        else { throw .damaged("\(url.path) does not hold what its header says") }
        return items
    }

    private func write(_ items: [String: Data], header old: Header, key derived: SecureBytes) throws(SecretStoreError) {
        var header = old
        header.names = items.keys.sorted()
        header.check = PassphraseSeal.seal(
            SecureBytes(Self.checkText), key: derived, associatedData: Array(Self.format.utf8) + header.salt)
        // An item set that cannot be encoded is an error, never an empty vault written over the real one.
        guard let encoded = try? JSONEncoder().encode(items) else {
            throw .damaged("its items could not be encoded; nothing was written")
        }
        let plain = SecureBytes(Array(encoded))
        header.sealed = PassphraseSeal.seal(plain, key: derived, associatedData: associatedData(header))
        try writePrivate(try encode(header), to: url)
    }

    func readHeader() throws(SecretStoreError) -> Header {
        try Self.refuseExposed(url)
        guard let data = try? Data(contentsOf: url) else { throw .damaged("\(url.path) cannot be read") }
        guard let header = try? JSONDecoder().decode(Header.self, from: data), header.format == Self.format else {
            throw .damaged("\(url.path) is not a trifactor vault")
        }
        return header
    }

    private func encode(_ value: some Encodable) throws(SecretStoreError) -> Data {
        do { return try JSONEncoder().encode(value) } catch { throw .damaged("it could not be encoded") }
    }

    /// Writes `data` to `target` atomically, in a 0700 folder, as a 0600 file.
    private func writePrivate(_ data: Data, to target: URL) throws(SecretStoreError) {
        let folder = target.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(
                at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch { throw .damaged("\(folder.path) cannot be created") }
        try Self.refuseExposed(folder, directory: true)
        let temporary = folder.appendingPathComponent(".\(target.lastPathComponent).\(UUID().uuidString)")
        guard
            FileManager.default.createFile(
                atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600])
        else {
            throw .damaged("\(folder.path) is not writable")
        }
        guard rename(temporary.path, target.path) == 0 else {
            try? FileManager.default.removeItem(at: temporary)
            throw .damaged("\(target.path) cannot be replaced")
        }
    }

    /// Refuses a file (or folder) that group or others may use, or a file
    /// that is a symbolic link (whoever can write its folder could point it anywhere).
    static func refuseExposed(_ url: URL, directory: Bool = false) throws(SecretStoreError) {
        var info = stat()
        // A folder is judged by what it points to (a dotfile manager links folders); a file by itself.
        guard (directory ? stat(url.path, &info) : lstat(url.path, &info)) == 0 else { return }
        if !directory && info.st_mode & S_IFMT == S_IFLNK {
            throw .exposed(path: url.path, fix: "cp --remove-destination \"$(readlink -f \(url.path))\" \(url.path)")
        }
        if info.st_mode & 0o077 != 0 {
            throw .exposed(path: url.path, fix: "chmod \(directory ? "700" : "600") \(url.path)")
        }
        if info.st_uid != getuid() { throw .exposed(path: url.path, fix: "chown \(getuid()) \(url.path)") }
    }
}
