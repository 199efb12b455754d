import Crypto
import Foundation
import HTTP

/// The key that seals secrets at rest: 32 random bytes, base64, in a file
/// readable by its owner only. Dev mode creates it when missing; otherwise a
/// missing file leaves TOTP unavailable (and says so at start-up), and an
/// unreadable or malformed one stops the server.
enum KeyFile {
    struct Failure: Error, CustomStringConvertible { let description: String }

    static func load(_ configuration: Configuration, logger: Logger) throws -> SealedBox? {
        let path = configuration.keyFile
        if !FileManager.default.fileExists(atPath: path) {
            guard configuration.dev else {
                logger.log("warn", "no_key_file", ["path": .string(path), "detail": "TOTP enrollment is unavailable until a key file exists"])
                return nil
            }
            try create(at: path)
            logger.log("info", "key_file_created", ["path": .string(path)])
        }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
              let key = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)), key.count == 32
        else { throw Failure(description: "The key file \(path) must hold 32 bytes in base64 (e.g. openssl rand -base64 32).") }
        return try SealedBox(key: Array(key))
    }

    /// Writes a new random key with mode 0600.
    static func create(at path: String) throws {
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let text = Data(SecureRandom.bytes(32)).base64EncodedString() + "\n"
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw Failure(description: "Cannot create the key file \(path).")
        }
    }
}
