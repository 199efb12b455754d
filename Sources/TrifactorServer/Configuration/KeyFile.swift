import Crypto
import Foundation
import Glibc
import Logging

/// The key that seals secrets at rest: 32 random bytes, base64, in a file
/// readable by its owner only. Dev mode creates it when missing; otherwise a
/// missing file leaves TOTP unavailable (and says so at start-up). A file
/// that group or others can read, or that is unreadable or malformed, stops
/// the server.
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
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & 0o077 != 0 {
            throw Failure(description: "The key file \(path) can be read by group or others; run: chmod 600 \(path)")
        }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
              let key = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)), key.count == 32
        else { throw Failure(description: "The key file \(path) must hold 32 bytes in base64 (e.g. openssl rand -base64 32).") }
        return try SealedBox(key: Array(key))
    }

    /// Writes a new random key, created with mode 0600 from the start, and
    /// never over a file that appeared meanwhile (O_EXCL).
    static func create(at path: String) throws {
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        if fd < 0 && errno == EEXIST { return }
        guard fd >= 0 else { throw Failure(description: "Cannot create the key file \(path).") }
        defer { close(fd) }
        let bytes = Array((Data(SecureRandom.bytes(32)).base64EncodedString() + "\n").utf8)
        guard bytes.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
            throw Failure(description: "Cannot write the key file \(path).")
        }
    }
}
