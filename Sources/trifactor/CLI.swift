import CommandLineKit
import Foundation
import TrifactorKit
import TrifactorKitVault

/// Exit codes, for scripts (`usage` is `UsageError.exitCode`).
enum ExitCode: Int32 {
    case ok = 0
    case failure = 1
    case usage = 2
    case denied = 3
    case expired = 4
    case limited = 5
}

/// What every command gets: the global options, the vault, the SDK values.
struct Context: Sendable {
    let server: URL
    let profile: String
    let terminal: Terminal
    let vault: Vault
    var json: Bool { terminal.json }

    var secrets: VaultSecretStore { VaultSecretStore(vault: vault) }

    var client: TrifactorClient {
        TrifactorClient(
            server: server, secrets: secrets, profile: profile, userAgent: "trifactor CLI (\(Self.machine))")
    }

    var device: DeviceAuthenticator {
        DeviceAuthenticator(
            server: server, keys: SoftwareDeviceKeyStore(vault: vault), secrets: secrets,
            presence: PassphrasePresence(vault: vault, honoursUnlockWindow: true),
            tag: "\(profile).device", crypto: OpenSSLTokenCrypto())
    }

    /// Prints `text` for people, or `object` as JSON with --json.
    func output(_ text: @autoclosure () -> String, json object: @autoclosure () -> Any) {
        if json {
            let data =
                (try? JSONSerialization.data(withJSONObject: object(), options: [.sortedKeys, .withoutEscapingSlashes]))
                ?? Data("{}".utf8)
            FileHandle.standardOutput.write(data + Data("\n".utf8))
        } else {
            print(text())
        }
    }

    static var machine: String {
        var name = utsname()
        uname(&name)
        let system = withUnsafeBytes(of: &name.sysname) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let host = ProcessInfo.processInfo.hostName
        return "\(system); \(host)"
    }
}

/// One verb of `trifactor`.
protocol Command: SendableMetatype {
    /// The words that name it (`factors`, `vault`…).
    static var name: String { get }
    /// One line for `trifactor help`.
    static var summary: String { get }
    /// Runs it; throws `UsageError`, `TrifactorError` or `CLIFailure`.
    static func run(_ arguments: [String], _ context: Context) async throws
}

/// A refusal of the CLI itself, with its exit code.
struct CLIFailure: Error {
    let sentence: String
    let code: ExitCode
    init(_ sentence: String, code: ExitCode = .failure) {
        self.sentence = sentence
        self.code = code
    }
}

enum CLI {
    static let commands: [any Command.Type] = [
        SignUpCommand.self, VerifyEmailCommand.self, ResetPasswordCommand.self, LoginCommand.self, WhoAmICommand.self,
        LogoutCommand.self, SessionsCommand.self,
        StepUpCommand.self, AuthorizeCommand.self, FactorsCommand.self, DeviceCommand.self, ApproveCommand.self,
        DenyCommand.self,
        TOTPCommand.self, VaultCommand.self, PhoneCommand.self, DoctorCommand.self,
    ]

    static let usage = """
        usage: trifactor [--server URL] [--profile NAME] [--json] [--no-input] COMMAND [ARGS]

        Global options: --server (or TRIFACTOR_SERVER; default http://127.0.0.1:8080), --profile (default "default"),
        --json (machine-readable output), --no-input (never prompt; fail instead).
        Secrets are never taken from arguments: type them when asked, or use --password-stdin / --code-stdin / --code @FILE.
        Exit codes: 0 ok, 1 error, 2 usage, 3 denied or cancelled, 4 expired or timed out, 5 locked or rate-limited for a while (retry later).

        Commands:
        """

    /// Runs the command line; returns the exit code.
    static func main(_ raw: [String]) async -> Int32 {
        var server =
            ProcessInfo.processInfo.environment["TRIFACTOR_SERVER"].flatMap { $0.isEmpty ? nil : $0 }
            ?? "http://127.0.0.1:8080"
        var profile = "default"
        var json = false
        var noInput = false
        // Global options come before the command, read one at a time: --help answers at once, and a refused option
        // is reported as JSON when --json came before it.
        var globals = ArgumentReader(
            raw, valued: ["server", "profile"], flags: ["json", "no-input", "help"], layout: .leading)
        do {
            while let option = try globals.next() {
                switch option {
                case .flag("json"): json = true
                case .flag("no-input"): noInput = true
                case .flag("help"):
                    print(help())
                    return 0
                case .option("server", let value): server = value
                case .option("profile", let value): profile = value
                default: break
                }
            }
        } catch {
            return fail(error, json: json)
        }
        let rest = globals.remaining
        guard let name = rest.first else {
            return fail(UsageError("Name a command; `trifactor help` lists them."), json: json)
        }
        if name == "help" {
            print(help())
            return 0
        }
        guard let url = URL(string: server), let scheme = url.scheme, ["http", "https"].contains(scheme),
            url.host != nil
        else {
            return fail(UsageError("--server must be an http:// or https:// URL."), json: json)
        }
        guard profile.range(of: "^[A-Za-z0-9_-]{1,40}$", options: .regularExpression) != nil else {
            return fail(UsageError("A profile name is 1 to 40 letters, digits, - or _."), json: json)
        }
        guard let command = commands.first(where: { $0.name == name }) else {
            return fail(UsageError("Unknown command \"\(name)\"; `trifactor help` lists them."), json: json)
        }
        let terminal = Terminal(noInput: noInput, json: json)
        let context = Context(
            server: url, profile: profile, terminal: terminal,
            vault: Vault(profile: profile, ask: terminal.passphraseSource()))
        do {
            try await command.run(Array(rest.dropFirst()), context)
            return 0
        } catch {
            return fail(error, json: json)
        }
    }

    /// The usage text and the table of commands (`trifactor help`, `--help`).
    static func help() -> String {
        usage + "\n" + Usage.table(commands.map { ($0.name, $0.summary) })
    }

    /// Prints the error's sentence on stderr (and as JSON with --json) and returns its exit code.
    static func fail(_ error: any Error, json: Bool) -> Int32 {
        let (sentence, code) = describe(error)
        FileHandle.standardError.write(Data("trifactor: \(sentence)\n".utf8))
        if json {
            let object: [String: Any] = ["error": sentence, "exit_code": Int(code.rawValue)]
            if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) {
                FileHandle.standardOutput.write(data + Data("\n".utf8))
            }
        }
        return code.rawValue
    }

    /// The sentence and exit code of an error.
    static func describe(_ error: any Error) -> (String, ExitCode) {
        switch error {
        case let usage as UsageError: return (usage.sentence, .usage)
        case let store as SecretStoreError: return describe(TrifactorError.secretStore(store))
        case let presence as LocalAuthenticationError: return describe(TrifactorError.presence(presence))
        case let failure as CLIFailure: return (failure.sentence, failure.code)
        case let sdk as TrifactorError:
            if let p = sdk.problem {
                // Trifactor's own details name the wait already ("try again in 83 seconds"): say it once.
                let wait =
                    p.detail.lowercased().contains("try again")
                    ? "" : p.retryAfter.map { " Try again in \(Int($0.rounded(.up))) s." } ?? ""
                switch p.code {
                case .tooManyAttempts, .rateLimited: return ("\(p.detail)\(wait)", .limited)
                case .sessionExpired, .invalidPendingCredential, .invalidResetCredential: return (p.detail, .expired)
                // Frozen until an administrator's reset: waiting does not help, so it is no 'try again later' (5).
                case .invalidCredentials, .invalidCode, .unauthenticated, .passkeyRefused, .attemptsExhausted,
                    .secondFactorFrozen:
                    return (p.detail, .denied)
                default:
                    return (p.status == 429 ? "\(p.detail)\(wait)" : p.detail, p.status == 429 ? .limited : .failure)
                }
            }
            if let e = sdk.presenceFailure {
                return (
                    e == .interactionNotAllowed
                        ? "A prompt was needed, but --no-input forbids it (or there is no terminal)." : e.message,
                    .denied
                )
            }
            if case .presence(let e)? = sdk.storeFailure {
                return (e == .failed ? "The vault passphrase is wrong." : e.message, .denied)
            }
            if case .locked? = sdk.storeFailure { return (sdk.description, .denied) }
            if let t = sdk.transportFailure { return (t.description, t.reason == .timedOut ? .expired : .failure) }
            switch sdk.code {
            case .approvalDenied, .cancelled: return (sdk.description, .denied)
            case .authorizationRefused:
                return (sdk.description, sdk.oauthError?.error == "invalid_grant" ? .expired : .denied)
            case .expired: return (sdk.description, .expired)
            case .notSignedIn: return ("Not signed in: run `trifactor login` first.", .denied)
            default: return (sdk.description, .failure)
            }
        default: return ("\(error)", .failure)
        }
    }
}
