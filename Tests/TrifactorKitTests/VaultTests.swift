import Crypto
import Foundation
import Testing
import TrifactorKit
import TrifactorKitTesting
import TrifactorKitVault

@Suite("The Linux vault")
struct VaultTests {
    static func folder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("vault-\(UUID().uuidString)")
    }

    static func vault(
        _ directory: URL, passphrase: String = "first passphrase", runtime: URL? = nil,
        clock: ManualClock = ManualClock()
    ) -> Vault {
        Vault(directory: directory, runtimeDirectory: runtime, clock: clock, opsLimit: 1, memLimit: 8 << 20) {
            _, _ throws(LocalAuthenticationError) in
            SecureBytes(Array(passphrase.utf8))
        }
    }

    @Test("a secret written is read back by a new vault value; the folder is 0700 and the file 0600")
    func roundTrip() async throws {
        let directory = Self.folder()
        let store = VaultSecretStore(vault: Self.vault(directory))
        try await store.set(
            Data("token-1".utf8), for: "default.session-token", protection: .afterFirstUnlockThisDeviceOnly)
        let again = VaultSecretStore(vault: Self.vault(directory))
        #expect(try await again.contains("default.session-token"))
        #expect(try await again.get("default.session-token", prompt: nil) == Data("token-1".utf8))
        #expect(try await again.get("missing", prompt: nil) == nil)
        let attributes = try FileManager.default.attributesOfItem(
            atPath: directory.appendingPathComponent("default.vault").path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect((try FileManager.default.attributesOfItem(atPath: directory.path)[.posixPermissions] as? Int) == 0o700)
        // Nothing secret in the clear.
        let raw = try String(contentsOf: directory.appendingPathComponent("default.vault"), encoding: .utf8)
        #expect(!raw.contains("token-1") && !raw.contains(Data("token-1".utf8).base64EncodedString()))
    }

    @Test("a wrong passphrase is a failed presence check, not damage")
    func wrongPassphrase() async throws {
        let directory = Self.folder()
        try await VaultSecretStore(vault: Self.vault(directory)).set(
            Data("x".utf8), for: "k", protection: .userPresence)
        let wrong = VaultSecretStore(vault: Self.vault(directory, passphrase: "not the passphrase"))
        await #expect(throws: SecretStoreError.presence(.failed)) { _ = try await wrong.get("k", prompt: "Show") }
    }

    @Test("a changed byte in the sealed items is damage, reported as such")
    func tampered() async throws {
        let directory = Self.folder()
        try await VaultSecretStore(vault: Self.vault(directory)).set(
            Data("secret".utf8), for: "k", protection: .userPresence)
        let file = directory.appendingPathComponent("default.vault")
        var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        var sealed = try #require(object["sealed"] as? [Int])
        sealed[sealed.count / 2] ^= 1
        object["sealed"] = sealed
        try JSONSerialization.data(withJSONObject: object).write(to: file)
        await #expect {
            _ = try await VaultSecretStore(vault: Self.vault(directory)).get("k", prompt: nil)
        } throws: { error in
            if case SecretStoreError.damaged = error { return true }
            return false
        }
        // Renaming an item in the clear header is caught too.
        object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        object["names"] = ["other"]
        try JSONSerialization.data(withJSONObject: object).write(to: file)
        await #expect(throws: SecretStoreError.self) {
            _ = try await VaultSecretStore(vault: Self.vault(directory)).get("other", prompt: nil)
        }
    }

    @Test("a vault file or folder others can read is refused with the chmod to run", arguments: [true, false])
    func permissive(folder: Bool) async throws {
        let directory = Self.folder()
        try await VaultSecretStore(vault: Self.vault(directory)).set(
            Data("x".utf8), for: "k", protection: .userPresence)
        let file = directory.appendingPathComponent("default.vault")
        try FileManager.default.setAttributes(
            [.posixPermissions: folder ? 0o755 : 0o640], ofItemAtPath: folder ? directory.path : file.path)
        let store = VaultSecretStore(vault: Self.vault(directory))
        if folder {
            // Reading a private file in an open folder still works; writing refuses the folder.
            await #expect(throws: SecretStoreError.exposed(path: directory.path, fix: "chmod 700 \(directory.path)")) {
                try await store.set(Data("y".utf8), for: "k2", protection: .userPresence)
            }
        } else {
            await #expect(throws: SecretStoreError.exposed(path: file.path, fix: "chmod 600 \(file.path)")) {
                _ = try await store.get("k", prompt: nil)
            }
        }
    }

    @Test("a vault file that is a symbolic link is refused, naming the copy that replaces it; a linked folder is not")
    func symbolicLink() async throws {
        let directory = Self.folder()
        let elsewhere = Self.folder()
        try await VaultSecretStore(vault: Self.vault(elsewhere)).set(
            Data("x".utf8), for: "k", protection: .userPresence)
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let file = directory.appendingPathComponent("default.vault")
        #expect(symlink(elsewhere.appendingPathComponent("default.vault").path, file.path) == 0)
        await #expect(
            throws: SecretStoreError.exposed(
                path: file.path, fix: "cp --remove-destination \"$(readlink -f \(file.path))\" \(file.path)")
        ) {
            _ = try await VaultSecretStore(vault: Self.vault(directory)).get("k", prompt: nil)
        }
        // A linked folder is fine: the vault in it reads and writes.
        let linked = Self.folder()
        #expect(symlink(elsewhere.path, linked.path) == 0)
        let store = VaultSecretStore(vault: Self.vault(linked))
        #expect(try await store.get("k", prompt: nil) == Data("x".utf8))
        try await store.set(Data("y".utf8), for: "k2", protection: .userPresence)
    }

    @Test("an unlock holds for its duration for other vault values (processes), then asks again")
    func unlockWindow() async throws {
        let directory = Self.folder()
        let runtime = Self.folder()
        let clock = ManualClock()
        try await VaultSecretStore(vault: Self.vault(directory, runtime: runtime, clock: clock)).set(
            Data("x".utf8), for: "k", protection: .userPresence)
        try await Self.vault(directory, runtime: runtime, clock: clock).unlock(for: 300)
        // A vault whose passphrase source would fail still reads: the unlock holds.
        let noPrompt = Vault(
            directory: directory, runtimeDirectory: runtime, clock: clock, opsLimit: 1, memLimit: 8 << 20
        ) { _, _ throws(LocalAuthenticationError) in
            throw .interactionNotAllowed
        }
        #expect(noPrompt.isUnlocked)
        #expect(try await VaultSecretStore(vault: noPrompt).get("k", prompt: nil) == Data("x".utf8))
        clock.advance(301)
        let later = Vault(directory: directory, runtimeDirectory: runtime, clock: clock, opsLimit: 1, memLimit: 8 << 20)
        { _, _ throws(LocalAuthenticationError) in
            throw .interactionNotAllowed
        }
        #expect(!later.isUnlocked)
        await #expect(throws: SecretStoreError.presence(.interactionNotAllowed)) {
            _ = try await VaultSecretStore(vault: later).get("k", prompt: nil)
        }
    }

    @Test("a changed passphrase opens the same items; the old one no longer does")
    func changePassphrase() async throws {
        let directory = Self.folder()
        try await VaultSecretStore(vault: Self.vault(directory)).set(
            Data("kept".utf8), for: "k", protection: .userPresence)
        try Self.vault(directory).changePassphrase(
            old: SecureBytes(Array("first passphrase".utf8)), new: SecureBytes(Array("second passphrase".utf8)))
        #expect(
            try await VaultSecretStore(vault: Self.vault(directory, passphrase: "second passphrase")).get(
                "k", prompt: nil) == Data("kept".utf8))
        await #expect(throws: SecretStoreError.presence(.failed)) {
            _ = try await VaultSecretStore(vault: Self.vault(directory)).get("k", prompt: nil)
        }
    }

    @Test(
        "the software device key signs ES256 that OpenSSL verifies with its public key; a second key with the same tag is refused"
    )
    func softwareKey() async throws {
        let keys = SoftwareDeviceKeyStore(vault: Self.vault(Self.folder()))
        let spki = try await keys.createKey(tag: "device", releasedBy: nil)
        #expect(try await keys.publicKey(tag: "device") == spki)
        let message = Data(DeviceAuthenticator.message(purpose: "poll", challenge: "id:1").utf8)
        let signature = try await keys.sign(message, tag: "device", reason: "test")
        let key = try ECDSAPublicKey(subjectPublicKeyInfo: Array(spki))
        #expect(key.isValidSignature(Array(signature), for: Array(message)))
        #expect(!key.isValidSignature(Array(signature), for: Array(message) + [0]))
        await #expect(throws: SecretStoreError.self) { _ = try await keys.createKey(tag: "device", releasedBy: nil) }
        try await keys.deleteKey(tag: "device")
        #expect(try await keys.publicKey(tag: "device") == nil)
    }

    @Test(
        "the approval key's item is sealed again under the passphrase: the open vault alone yields no key, and a changed passphrase still signs"
    )
    func approvalKeyAcrossPassphraseChange() async throws {
        let directory = Self.folder()
        let keys = SoftwareDeviceKeyStore(vault: Self.vault(directory))
        let spki = try await keys.createKey(tag: "device.approval", releasedBy: .biometricsOrPasscode)
        // What the unlocked vault holds under the key's name is a second seal, not a PKCS#8.
        let stored = try #require(
            try await VaultSecretStore(vault: Self.vault(directory)).get("device.approval.gated-key", prompt: nil))
        #expect((try? P256SigningKey(pkcs8: SecureBytes(Array(stored)))) == nil)
        #expect(
            try await VaultSecretStore(vault: Self.vault(directory)).get("device.approval.private-key", prompt: nil)
                == nil)

        try Self.vault(directory).changePassphrase(
            old: SecureBytes(Array("first passphrase".utf8)), new: SecureBytes(Array("second passphrase".utf8)))
        let message = Data(DeviceAuthenticator.message(purpose: "signin", challenge: "c").utf8)
        let after = SoftwareDeviceKeyStore(vault: Self.vault(directory, passphrase: "second passphrase"))
        let signature = try await after.sign(message, tag: "device.approval", reason: "Approve")
        #expect(
            try ECDSAPublicKey(subjectPublicKeyInfo: Array(spki)).isValidSignature(
                Array(signature), for: Array(message)))
        let before = SoftwareDeviceKeyStore(vault: Self.vault(directory))
        await #expect(throws: SecretStoreError.presence(.failed)) {
            _ = try await before.sign(message, tag: "device.approval", reason: "Approve")
        }
    }

    @Test(
        "an approval key left sealed under an earlier passphrase never blocks a passphrase change, and signing with it says how to replace it"
    )
    func staleApprovalKey() async throws {
        let directory = Self.folder()
        _ = try await SoftwareDeviceKeyStore(vault: Self.vault(directory)).createKey(
            tag: "device.approval", releasedBy: .biometricsOrPasscode)
        // What a release that did not re-seal approval keys left: the vault under the second passphrase, the key under the first.
        let store = VaultSecretStore(vault: Self.vault(directory))
        let stale = try #require(try await store.get("device.approval.gated-key", prompt: nil))
        try Self.vault(directory).changePassphrase(
            old: SecureBytes(Array("first passphrase".utf8)), new: SecureBytes(Array("second passphrase".utf8)))
        try await VaultSecretStore(vault: Self.vault(directory, passphrase: "second passphrase"))
            .set(stale, for: "device.approval.gated-key", protection: .afterFirstUnlockThisDeviceOnly)

        try Self.vault(directory, passphrase: "second passphrase").changePassphrase(
            old: SecureBytes(Array("second passphrase".utf8)),
            new: SecureBytes(Array("third passphrase".utf8)))
        let keys = SoftwareDeviceKeyStore(vault: Self.vault(directory, passphrase: "third passphrase"))
        await #expect {
            _ = try await keys.sign(Data("m".utf8), tag: "device.approval", reason: "Approve")
        } throws: { error in
            guard case SecretStoreError.damaged(let sentence) = error else { return false }
            return sentence.contains("trifactor device forget")
        }
    }
}

@Suite("The vault across processes")
struct VaultProcessTests {
    /// The `trifactor` binary of this build.
    static var cli: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent(".build/debug/trifactor")
    }

    @Test(
        "a TOTP secret written by this process is read by the trifactor process, which prints the same code",
        .enabled(if: FileManager.default.isExecutableFile(atPath: cli.path)))
    func acrossProcesses() async throws {
        let home = VaultTests.folder()
        let data = home.appendingPathComponent("data/trifactor")
        let passphraseFile = home.appendingPathComponent("passphrase")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        #expect(
            FileManager.default.createFile(
                atPath: passphraseFile.path, contents: Data("first passphrase\n".utf8),
                attributes: [.posixPermissions: 0o600]))
        // RFC 6238's SHA-1 test secret, as `trifactor totp add` would store it.
        let entry = #"{"secret":"GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ","algorithm":"SHA1","digits":6,"period":30}"#
        try await VaultSecretStore(vault: VaultTests.vault(data)).set(
            Data(entry.utf8), for: "default.totp.rfc", protection: .userPresence)

        let process = Process()
        process.executableURL = Self.cli
        process.arguments = ["--json", "--no-input", "totp", "rfc"]
        process.environment = [
            "XDG_DATA_HOME": home.appendingPathComponent("data").path,
            "TRIFACTOR_VAULT_PASSPHRASE_FILE": passphraseFile.path,
            "PATH": "/usr/bin:/bin",
        ]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let printed = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: printed) as? [String: Any])
        let now = Date()
        let expected = OneTimePassword.hotp(
            secret: Array("12345678901234567890".utf8),
            counter: OneTimePassword.step(unixTime: now.timeIntervalSince1970, period: 30),
            digits: 6, algorithm: .sha1)
        let previous = OneTimePassword.hotp(
            secret: Array("12345678901234567890".utf8),
            counter: OneTimePassword.step(unixTime: now.timeIntervalSince1970 - 30, period: 30), digits: 6,
            algorithm: .sha1)
        #expect([expected, previous].contains(object["code"] as? String))

        // And the other way: a wrong passphrase in the file is refused with exit 3, nothing printed but the error.
        #expect(
            FileManager.default.createFile(
                atPath: passphraseFile.path, contents: Data("wrong\n".utf8), attributes: [.posixPermissions: 0o600]))
        let refused = Process()
        refused.executableURL = Self.cli
        refused.arguments = ["--no-input", "totp", "rfc"]
        refused.environment = process.environment
        let errors = Pipe()
        refused.standardError = errors
        refused.standardOutput = FileHandle.nullDevice
        try refused.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        refused.waitUntilExit()
        #expect(refused.terminationStatus == 3)
        #expect(message.contains("passphrase is wrong"))
    }
}
