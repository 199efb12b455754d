import CommandLineKit
import Core
import Crypto
import Foundation
import TrifactorKit
import TrifactorKitVault

/// An authenticator-app entry kept in the vault.
struct TOTPEntry: Codable, Sendable {
    var secret: String
    var algorithm: String = "SHA1"
    var digits: Int = 6
    var period: Int = 30
    var issuer: String?
    var account: String?
    /// The Trifactor factor it proves, when the CLI enrolled it (`factors add totp --keep`).
    var factorID: String?

    init?(secret: String) {
        let cleaned = secret.replacingOccurrences(of: " ", with: "").uppercased()
        guard let bytes = Base32.decode(cleaned), bytes.count >= 10 else { return nil }
        self.secret = cleaned
    }

    /// From an `otpauth://totp/…` URI.
    init?(uri: String) {
        guard let components = URLComponents(string: uri), components.scheme == "otpauth", components.host == "totp"
        else { return nil }
        let items = Dictionary(
            (components.queryItems ?? []).map { ($0.name.lowercased(), $0.value ?? "") },
            uniquingKeysWith: { a, _ in a })
        guard let secret = items["secret"], var entry = TOTPEntry(secret: secret) else { return nil }
        entry.algorithm = (items["algorithm"] ?? "SHA1").uppercased()
        entry.digits = Int(items["digits"] ?? "6") ?? 6
        entry.period = Int(items["period"] ?? "30") ?? 30
        entry.issuer = items["issuer"]
        entry.account = String(components.path.dropFirst())
        guard ["SHA1", "SHA256", "SHA512"].contains(entry.algorithm), (6...8).contains(entry.digits),
            (15...120).contains(entry.period)
        else { return nil }
        self = entry
    }

    var hmac: HMAC.Algorithm { HMAC.Algorithm(rawValue: algorithm.lowercased()) ?? .sha1 }

    func code(at date: Date) -> String {
        OneTimePassword.hotp(
            secret: Base32.decode(secret) ?? [],
            counter: OneTimePassword.step(unixTime: date.timeIntervalSince1970, period: period),
            digits: digits, algorithm: hmac)
    }

    func secondsLeft(at date: Date) -> Int { period - Int(date.timeIntervalSince1970) % period }
}

struct TOTPCommand: Command {
    static let name = "totp"
    static let summary = "[NAME] | add NAME | list | rm NAME   this CLI as an authenticator app (secrets in the vault)"
    static func key(_ name: String, _ context: Context) -> String { "\(context.profile).totp.\(name)" }

    static func run(_ raw: [String], _ context: Context) async throws {
        let a = try Arguments(raw)
        let secrets = context.secrets
        let prefix = "\(context.profile).totp."
        switch a.words.first {
        case "add":
            try a.atMost(2)
            let name = try a.word(1, "the entry's name")
            guard name.range(of: "^[A-Za-z0-9._@-]{1,64}$", options: .regularExpression) != nil else {
                throw UsageError("A name is 1 to 64 letters, digits, . _ @ or -.")
            }
            if !context.json && isatty(STDIN_FILENO) == 1 {
                print("Paste the otpauth:// URI or the base32 secret, then Enter:")
            }
            let line = Terminal.firstLine(FileHandle.standardInput.availableData).trimmingCharacters(in: .whitespaces)
            guard let entry = TOTPEntry(uri: line) ?? TOTPEntry(secret: line) else {
                throw UsageError("That is neither an otpauth://totp URI nor a base32 secret of at least 80 bits.")
            }
            try await store(entry, name: name, context)
            context.output("Added \(name).", json: ["name": name])
        case "list":
            try a.atMost(1)
            let names = try context.vault.names().filter { $0.hasPrefix(prefix) }.map {
                String($0.dropFirst(prefix.count))
            }
            context.output(
                names.isEmpty ? "No entries: `trifactor totp add NAME`." : names.joined(separator: "\n"),
                json: ["entries": names])
        case "rm":
            try a.atMost(2)
            let name = try a.word(1, "the entry's name")
            guard try await secrets.contains(key(name, context)) else { throw CLIFailure("No entry \(name).") }
            try await secrets.remove(key(name, context))
            context.output("Removed \(name).", json: ["status": "removed", "name": name])
        default:
            try a.atMost(1)
            let names = try context.vault.names().filter { $0.hasPrefix(prefix) }.map {
                String($0.dropFirst(prefix.count))
            }
            let name: String
            if let wanted = a.words.first {
                name = wanted
            } else if names.count == 1 {
                name = names[0]
            } else {
                throw UsageError(
                    names.isEmpty
                        ? "No entries: `trifactor totp add NAME`." : "Name the entry: \(names.joined(separator: ", "))."
                )
            }
            guard let data = try await secrets.get(key(name, context), prompt: "Show a code"),
                let entry = try? JSONDecoder().decode(TOTPEntry.self, from: data)
            else { throw CLIFailure("No entry \(name).") }
            let now = Date()
            context.output(
                "\(entry.code(at: now))  (\(entry.secondsLeft(at: now)) s left)",
                json: ["name": name, "code": entry.code(at: now), "seconds_left": entry.secondsLeft(at: now)])
        }
    }

    static func store(_ entry: TOTPEntry, name: String, _ context: Context) async throws {
        let data = try JSONEncoder().encode(entry)
        try await context.secrets.set(data, for: key(name, context), protection: .userPresence)
    }

    /// The code of the entry that proves `hint`, when this CLI keeps it.
    static func localCode(for hint: FactorHint, _ context: Context) async throws -> String? {
        let prefix = "\(context.profile).totp."
        for name in try context.vault.names() where name.hasPrefix(prefix) {
            if let data = try await context.secrets.get(name, prompt: "Use the kept authenticator"),
                let entry = try? JSONDecoder().decode(TOTPEntry.self, from: data), entry.factorID == hint.id
            {
                return entry.code(at: Date())
            }
        }
        return nil
    }
}

struct VaultCommand: Command {
    static let name = "vault"
    static let summary =
        "unlock [--for 5m] | lock | passwd | status   the sealed file holding keys, secrets and the session token"

    static func run(_ raw: [String], _ context: Context) async throws {
        let a = try Arguments(raw, valued: ["for"])
        try a.atMost(1)
        let vault = context.vault
        switch try a.word(0, "unlock, lock, passwd or status") {
        case "unlock":
            let duration = try parseDuration(a.value("for") ?? "5m")
            if !vault.exists {
                let passphrase = try await ask(context, "New vault passphrase: ", confirm: true)
                try vault.create(passphrase: passphrase)
            }
            try await vault.unlock(for: duration)
            let until = vault.unlockedUntil()
            context.output(
                until.map { "Unlocked until \(WireJSON.format($0))." }
                    ?? "Unlocked for this process only (no $XDG_RUNTIME_DIR).",
                json: ["status": "unlocked", "until": until.map { WireJSON.format($0) as Any } ?? NSNull()])
        case "lock":
            vault.lock()
            context.output("Locked.", json: ["status": "locked"])
        case "passwd":
            guard vault.exists else { throw CLIFailure("There is no vault yet.") }
            let old = try await ask(context, "Current passphrase: ", confirm: false)
            let new = try await ask(context, "New passphrase: ", confirm: true)
            try vault.changePassphrase(old: old, new: new)
            context.output("Passphrase changed; every unlock is forgotten.", json: ["status": "changed"])
        case "status":
            let until = vault.unlockedUntil()
            let names = try vault.names()
            context.output(
                """
                vault \(vault.url.path)\(vault.exists ? "" : " (not created yet)")
                \(until.map { "unlocked until \(WireJSON.format($0))" } ?? "locked")
                \(names.count) item\(names.count == 1 ? "" : "s")
                """,
                json: [
                    "path": vault.url.path, "exists": vault.exists,
                    "unlocked_until": until.map { WireJSON.format($0) as Any } ?? NSNull(), "items": names.count,
                ])
        case let other: throw UsageError("Unknown `vault \(other)`: unlock, lock, passwd or status.")
        }
    }

    static func ask(_ context: Context, _ prompt: String, confirm: Bool) async throws -> SecureBytes {
        do throws(LocalAuthenticationError) {
            return try await context.terminal.passphraseSource()(prompt, confirm)
        } catch {
            throw TrifactorError.presence(error)
        }
    }
}
