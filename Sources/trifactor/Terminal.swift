import CommandLineKit
import Crypto
import Foundation
import TrifactorKit
import TrifactorKitVault

/// The terminal: prompts (echo off for secrets, on /dev/tty so stdin stays
/// for `--password-stdin`), reading secrets from stdin or `@FILE`, and the
/// spinner shown while waiting.
struct Terminal: Sendable {
    /// `--no-input`: never prompt.
    let noInput: Bool
    /// `--json`: no decoration on stdout.
    let json: Bool

    var stdoutIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

    /// Asks for a line, echoed.
    func ask(_ prompt: String) throws(LocalAuthenticationError) -> String {
        guard !noInput else { throw .interactionNotAllowed }
        return try readTTY(prompt, echo: true)
    }

    /// Asks for a secret, not echoed.
    func askSecret(_ prompt: String) throws(LocalAuthenticationError) -> String {
        guard !noInput else { throw .interactionNotAllowed }
        return try readTTY(prompt, echo: false)
    }

    /// A secret from stdin (`--x-stdin`), a file (`@FILE`), or the terminal. A literal value is refused.
    func secret(stdin: Bool, file: String?, name: String, prompt: String) throws -> String {
        if let file {
            guard file.hasPrefix("@") else {
                throw UsageError(
                    "Secrets are never taken from arguments: use --\(name)-stdin, --\(name) @FILE, or type it when asked."
                )
            }
            guard let data = FileManager.default.contents(atPath: String(file.dropFirst())) else {
                throw UsageError("\(file.dropFirst()) cannot be read.")
            }
            return Self.firstLine(data)
        }
        if stdin { return Self.firstLine(FileHandle.standardInput.readDataToEndOfFile()) }
        do { return try askSecret(prompt) } catch { throw TrifactorError.presence(error) }
    }

    static func firstLine(_ data: Data) -> String {
        String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).first.map(
            String.init)?
            .trimmingCharacters(in: CharacterSet(charactersIn: "\r")) ?? ""
    }

    private func readTTY(_ prompt: String, echo: Bool) throws(LocalAuthenticationError) -> String {
        let fd = open("/dev/tty", O_RDWR)
        guard fd >= 0 else { throw .interactionNotAllowed }
        defer { close(fd) }
        _ = prompt.withCString { write(fd, $0, strlen($0)) }
        var saved = termios()
        let canHide = tcgetattr(fd, &saved) == 0
        if !echo && canHide {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(fd, TCSAFLUSH, &quiet)
        }
        defer {
            if !echo && canHide {
                tcsetattr(fd, TCSAFLUSH, &saved)
                _ = write(fd, "\n", 1)
            }
        }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let n = read(fd, &byte, 1)
            if n <= 0 { if line.isEmpty { throw .userCancel } else { break } }
            if byte == 0x0A || byte == 0x0D { break }
            line.append(byte)
            if line.count > 4096 { break }
        }
        return String(decoding: line, as: UTF8.self)
    }

    /// The vault's passphrase source: the terminal, or the file named by `TRIFACTOR_VAULT_PASSPHRASE_FILE` (0600) for scripts.
    func passphraseSource() -> PassphraseSource {
        let file = ProcessInfo.processInfo.environment["TRIFACTOR_VAULT_PASSPHRASE_FILE"]
        let terminal = self
        return { prompt, confirm throws(LocalAuthenticationError) in
            if let file, !file.isEmpty {
                var info = stat()
                guard stat(file, &info) == 0, info.st_mode & 0o077 == 0,
                    let data = FileManager.default.contents(atPath: file)
                else {
                    throw .interactionNotAllowed
                }
                return SecureBytes(Array(Self.firstLine(data).utf8))
            }
            let first = try terminal.askSecret(prompt)
            guard !first.isEmpty else { throw .userCancel }
            if confirm {
                guard first.count >= 8 else {
                    FileHandle.standardError.write(Data("A vault passphrase has at least 8 characters.\n".utf8))
                    throw .failed
                }
                guard try terminal.askSecret("Again: ") == first else {
                    FileHandle.standardError.write(Data("The two passphrases differ.\n".utf8))
                    throw .failed
                }
            }
            return SecureBytes(Array(first.utf8))
        }
    }

    /// Shows `label` with a spinner and the seconds left until `deadline` while `work` runs (only on a terminal, never with --json).
    func waiting<T: Sendable>(_ label: String, until deadline: Date?, _ work: @Sendable () async throws -> T)
        async throws -> T
    {
        guard stdoutIsTerminal, !json else { return try await work() }
        let spinner = Task {
            let frames = Array("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
            var index = 0
            while !Task.isCancelled {
                let left = deadline.map { " (\(max(0, Int($0.timeIntervalSinceNow))) s left)" } ?? ""
                FileHandle.standardOutput.write(Data("\r\(frames[index % frames.count]) \(label)\(left)\u{1B}[K".utf8))
                index += 1
                try? await Task.sleep(nanoseconds: 100_000_000)
            }
        }
        defer {
            spinner.cancel()
            FileHandle.standardOutput.write(Data("\r\u{1B}[K".utf8))
        }
        return try await work()
    }
}
