import Core
import Crypto
package import Foundation
import Glibc
import Logging
import Store

/// The key ring file: the keys that seal secrets at rest, readable by its
/// owner only. One key per line, `ID CREATED BASE64` (CREATED in RFC 3339),
/// the last line the active key that seals from now on; `#` starts a comment.
/// A file holding a single base64 key (the first format) reads as key `k0`.
/// Dev mode creates the file when missing; otherwise a missing file leaves
/// TOTP unavailable, unless the database already holds sealed secrets, which
/// stops the server. A file that group or others can read, or that is
/// unreadable or malformed, stops the server.
package enum KeyFile {
    struct Failure: Error, CustomStringConvertible { let description: String }

    /// One key of the ring.
    package struct Entry: Equatable {
        package let id: String
        package let created: Date
        package let key: [UInt8]

        package init(id: String, created: Date, key: [UInt8]) {
            self.id = id
            self.created = created
            self.key = key
        }
    }

    static func load(_ configuration: Configuration, logger: Logger) throws -> KeyRing? {
        let path = configuration.keyFile
        if !FileManager.default.fileExists(atPath: path) {
            guard configuration.dev else {
                logger.log(
                    .warning, "no_key_file",
                    ["path": .string(path), "detail": "TOTP enrollment is unavailable until a key file exists"])
                return nil
            }
            try create(at: path)
            logger.log(.info, "key_file_created", ["path": .string(path)])
        }
        return try KeyRing(path: path)
    }

    /// The entries of the file at `path`, checked.
    static func read(_ path: String) throws -> [Entry] {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw Failure(description: "The key file \(path) cannot be read: \(String(cString: strerror(errno))).")
        }
        if info.st_mode & 0o077 != 0 {
            throw Failure(description: "The key file \(path) can be read by group or others; run: chmod 600 \(path)")
        }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw Failure(description: "The key file \(path) cannot be read.")
        }
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter {
            !$0.isEmpty && !$0.hasPrefix("#")
        }
        if lines.count == 1, !lines[0].contains(" "), let key = Data(base64Encoded: lines[0]), key.count == 32 {
            return [Entry(id: "k0", created: .distantPast, key: Array(key))]
        }
        var entries: [Entry] = []
        for (number, line) in lines.enumerated() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count == 3, isKeyID(fields[0]), !entries.contains(where: { $0.id == fields[0] }),
                let created = try? Date(String(fields[1]), strategy: .iso8601),
                let key = Data(base64Encoded: String(fields[2])), key.count == 32
            else {
                throw Failure(
                    description:
                        "The key file \(path) must hold one key per line, ID CREATED BASE64 (32 bytes), ids unique; line \(number + 1) is not."
                )
            }
            entries.append(Entry(id: String(fields[0]), created: created, key: Array(key)))
        }
        guard !entries.isEmpty else {
            throw Failure(description: "The key file \(path) holds no key: openssl rand -base64 32 makes one.")
        }
        return entries
    }

    static func isKeyID(_ text: Substring) -> Bool {
        (1...16).contains(text.count) && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
    }

    /// Replaces the file at `path` with `entries`: written to a new file of
    /// mode 0600 and renamed over the old one, so a reader sees one or the other.
    /// The new file takes the old one's owner (a rotation run with sudo must
    /// not leave a file the server cannot read); it is a file this call
    /// created (`O_EXCL`), so the ownership it hands over is of nothing else.
    /// - Throws: `Failure` when the key file is a link or not a regular file (see `checkedForWriting`).
    static func write(_ entries: [Entry], to path: String) throws {
        let owner = try checkedForWriting(path)
        var text = "# Trifactor key ring: ID CREATED BASE64, one key per line; the last seals, the others only open.\n"
        for e in entries {
            text +=
                "\(e.id) \(e.created == .distantPast ? "1970-01-01T00:00:00Z" : e.created.formatted(.iso8601)) \(Data(e.key).base64EncodedString())\n"
        }
        let partial = path + ".new-" + Hex.encode(SecureRandom.bytes(6))
        let fd = open(partial, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw Failure(description: "Cannot write \(partial): \(String(cString: strerror(errno))).")
        }
        _ = fchown(fd, owner.uid, owner.gid)
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd)
        close(fd)
        guard written == bytes.count, synced == 0, rename(partial, path) == 0 else {
            unlink(partial)
            throw Failure(description: "Cannot replace the key file \(path): \(String(cString: strerror(errno))).")
        }
        // The rename itself reaches the disk.
        let directory = open(
            URL(fileURLWithPath: path).deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
    }

    /// Runs `body` holding an exclusive lock on `PATH.lock` (beside the key
    /// file), so a rotation and a retirement never write over each other.
    ///
    /// - Important: `keys rotate` runs as root while the key file's folder
    ///   belongs to the service account, which can plant anything there. So
    ///   the lock file is never followed (`O_NOFOLLOW`), and only a lock file
    ///   this call created (`O_EXCL`) is given the key file's owner; an
    ///   existing one must be a regular file with one link, owned by root or
    ///   by the key file's owner, or the call stops and changes nothing.
    ///   Otherwise a link planted there would hand `/etc/shadow` (or a new
    ///   file anywhere) to the service account.
    /// - Throws: `Failure` for a key file or lock file that is a link, or
    ///   not a regular file, or a lock file someone else owns.
    static func withLock<T>(_ path: String, _ body: () throws -> T) throws -> T {
        let owner = try checkedForWriting(path)
        let lockPath = path + ".lock"
        var fd = open(lockPath, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if fd >= 0 {
            _ = fchown(fd, owner.uid, owner.gid)
        } else if errno == EEXIST {
            // Not even opened unless it is a regular file (a device node's open can act).
            var seen = stat()
            guard lstat(lockPath, &seen) == 0, seen.st_mode & S_IFMT == S_IFREG else {
                throw Failure(
                    description:
                        "Refusing the lock file \(lockPath): it is a symbolic link or not a regular file. Remove it and run the command again."
                )
            }
            // O_NONBLOCK: a FIFO planted there must not hang the command before fstat refuses it.
            fd = open(lockPath, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else {
                let reason = errno == ELOOP ? "it is a symbolic link" : String(cString: strerror(errno))
                throw Failure(
                    description: "Refusing the lock file \(lockPath): \(reason). Remove it and run the command again.")
            }
            var info = stat()
            guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_nlink == 1,
                info.st_uid == 0 || info.st_uid == owner.uid
            else {
                close(fd)
                throw Failure(
                    description:
                        "Refusing the lock file \(lockPath): it must be a regular file with one link, owned by root or by the key file's owner. Remove it and run the command again."
                )
            }
        } else {
            throw Failure(description: "Cannot lock the key file \(path): \(String(cString: strerror(errno))).")
        }
        defer { close(fd) }
        guard flock(fd, LOCK_EX) == 0 else {
            throw Failure(description: "Cannot lock the key file \(path): \(String(cString: strerror(errno))).")
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }

    /// The owner of the key file at `path`, once it is known to be a regular
    /// file with one link (`lstat`: a symbolic link is not followed). A ring
    /// that is rewritten must be the file itself: a link would have the
    /// rename replace the link, or the owner of another file be copied.
    /// Reading alone accepts a link (a read-only mount, such as a Kubernetes
    /// secret, is one), since nothing is written through it.
    static func checkedForWriting(_ path: String) throws -> (uid: uid_t, gid: gid_t) {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            throw Failure(description: "The key file \(path) cannot be read: \(String(cString: strerror(errno))).")
        }
        guard info.st_mode & S_IFMT == S_IFREG, info.st_nlink == 1 else {
            let what =
                info.st_mode & S_IFMT == S_IFLNK
                ? "a symbolic link"
                : info.st_mode & S_IFMT == S_IFREG ? "a file with \(info.st_nlink) links" : "not a regular file"
            throw Failure(
                description:
                    "The key file \(path) is \(what); rotating and retiring keys rewrite it, so it must be a regular file with one link (copy the ring there instead)."
            )
        }
        return (info.st_uid, info.st_gid)
    }

    /// Writes a new ring of one random key, created with mode 0600 from the
    /// start, and never over a file that appeared meanwhile (O_EXCL).
    static func create(at path: String) throws {
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        if fd < 0 && errno == EEXIST { return }
        guard fd >= 0 else { throw Failure(description: "Cannot create the key file \(path).") }
        defer { close(fd) }
        let line = "k1 \(Date().formatted(.iso8601)) \(Data(SecureRandom.bytes(32)).base64EncodedString())\n"
        let bytes = Array(line.utf8)
        guard bytes.withUnsafeBytes({ Glibc.write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
            throw Failure(description: "Cannot write the key file \(path).")
        }
    }
}

extension KeyFile {
    /// Stops a start that would orphan or misread secrets: the database holds
    /// sealed secrets but the key file is missing, or the ring does not open
    /// one of them (a wrong file, or one missing the key that sealed it).
    /// Up to 200 secrets are tried, one per key id among them.
    static func checkOpens(_ ring: KeyRing?, path: String, database: any Database) throws {
        let sample = try database.read { db in
            try FactorRepository.sealedSecrets(limit: 200, on: db).compactMap { row -> (String, [UInt8])? in
                guard let bytes = Data(base64Encoded: row.sealed) else { return nil }
                return (row.id, Array(bytes))
            }
        }
        guard !sample.isEmpty else { return }
        guard let ring else {
            throw Failure(
                description:
                    "The key file \(path) is missing, but the database holds secrets sealed with it: restore the key file from its backup (a new key would not open them)."
            )
        }
        var tried: Set<String> = []
        for (id, sealed) in sample {
            let keyID = KeyRing.keyID(of: sealed).id
            guard tried.insert(keyID).inserted else { continue }
            do { _ = try ring.open(sealed, associatedData: TOTPFactor.associatedData(FactorID(id))) } catch {
                let known = ring.entries.contains { $0.id == keyID }
                throw Failure(
                    description: known
                        ? "The key file \(path) does not open the secrets in the database: key \(keyID) there is not the key that sealed them. Restore the right key file."
                        : "The key file \(path) lacks key \(keyID), which sealed secrets in the database: restore a key file that holds it."
                )
            }
        }
    }
}
