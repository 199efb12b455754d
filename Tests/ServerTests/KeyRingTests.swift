import Crypto
import Foundation
import Glibc
import ServerTestSupport
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

@Suite("The key ring that seals secrets at rest")
struct KeyRingTests {
    static func file(_ text: String, mode: Int = 0o600) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ring-\(UUID().uuidString).key").path
        #expect(
            FileManager.default.createFile(
                atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: mode]))
        return path
    }

    static func line(_ id: String, _ key: [UInt8], created: String = "2026-12-01T10:00:00Z") -> String {
        "\(id) \(created) \(Data(key).base64EncodedString())\n"
    }

    @Test("a file of one base64 key is key k0, and what it sealed before rings opens; new seals name their key")
    func firstFormat() throws {
        let key = SecureRandom.bytes(32)
        let legacy = try SealedBox(key: key).seal(Array("seed".utf8), associatedData: [1])
        let ring = try KeyRing(path: try Self.file(Data(key).base64EncodedString() + "\n"))
        #expect(ring.activeID == "k0")
        #expect(try ring.open(legacy, associatedData: [1]) == Array("seed".utf8))
        let sealed = try ring.seal(Array("seed".utf8), associatedData: [2])
        #expect(KeyRing.keyID(of: sealed).id == "k0" && Array(sealed.prefix(3)) == [0xFF, 0x54, 0x4B])
        #expect(try ring.open(sealed, associatedData: [2]) == Array("seed".utf8))
        #expect(throws: SealedBox.Failure.authenticationFailed) { try ring.open(sealed, associatedData: [3]) }
        var altered = sealed
        altered[altered.count - 1] ^= 1
        #expect(throws: SealedBox.Failure.authenticationFailed) { try ring.open(altered, associatedData: [2]) }
    }

    @Test(
        "the last key seals, every key opens, and a key added to the file by a rotation is found when a value names it")
    func rotation() throws {
        let old = SecureRandom.bytes(32)
        let new = SecureRandom.bytes(32)
        let path = try Self.file(Self.line("k1", old))
        let serving = try KeyRing(path: path)
        let underOld = try serving.seal([7], associatedData: [])
        // Another process rotates the file and seals under the new key.
        try KeyFile.write(try KeyFile.read(path) + [KeyFile.Entry(id: "k2", created: Date(), key: new)], to: path)
        let rotated = try KeyRing(path: path)
        let underNew = try rotated.seal([9], associatedData: [])
        #expect(rotated.activeID == "k2" && KeyRing.keyID(of: underNew).id == "k2")
        // The serving ring has not reloaded yet: it opens the new value by reading the file again.
        #expect(serving.activeID == "k1")
        #expect(try serving.open(underNew, associatedData: []) == [9])
        #expect(serving.activeID == "k2")
        #expect(try serving.open(underOld, associatedData: []) == [7])
        // A key no file holds cannot open anything.
        let stranger = try KeyRing(entries: [KeyFile.Entry(id: "k9", created: Date(), key: SecureRandom.bytes(32))])
        #expect(throws: SealedBox.Failure.authenticationFailed) {
            try serving.open(try stranger.seal([1], associatedData: []), associatedData: [])
        }
    }

    @Test(
        "a key file others can read, a malformed line, a short key or a repeated id stops with a sentence naming the file"
    )
    func refusals() throws {
        let key = SecureRandom.bytes(32)
        func refusal(_ text: String, mode: Int = 0o600) throws -> String {
            let path = try Self.file(text, mode: mode)
            do {
                _ = try KeyRing(path: path)
                return ""
            } catch let failure as KeyFile.Failure { return failure.description }
        }
        #expect(try refusal(Self.line("k1", key), mode: 0o644).contains("chmod 600"))
        #expect(try refusal("k1 yesterday \(Data(key).base64EncodedString())\n").contains("line 1"))
        #expect(try refusal(Self.line("k1", key) + Self.line("k2", Array(key.prefix(16)))).contains("line 2"))
        #expect(try refusal(Self.line("k1", key) + Self.line("k1", key)).contains("ids unique"))
        #expect(try refusal("# only a comment\n").contains("holds no key"))
        #expect(try refusal(Self.line("k1", key) + "# a comment\n\n" + Self.line("k2", key)) == "")
    }

    @Test(
        "a rotation run as root leaves the key file and its lock file to the key file's owner",
        .enabled(if: getuid() == 0))
    func ownerKept() throws {
        let path = try Self.file(Self.line("k1", SecureRandom.bytes(32)))
        defer { for p in [path, path + ".lock"] { unlink(p) } }
        #expect(chown(path, 65534, 65534) == 0)
        try KeyFile.withLock(path) {
            try KeyFile.write(
                try KeyFile.read(path) + [KeyFile.Entry(id: "k2", created: Date(), key: SecureRandom.bytes(32))],
                to: path)
        }
        for file in [path, path + ".lock"] {
            var info = stat()
            #expect(stat(file, &info) == 0 && info.st_uid == 65534 && info.st_gid == 65534, "\(file)")
        }
    }

    /// A victim file owned by root, and a key file owned by the service account (nobody) in a folder of its own.
    private static func plantedRing() throws -> (folder: String, key: String, victim: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ring-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let key = folder + "/trifactor.key"
        let victim = folder + "/victim"
        #expect(
            FileManager.default.createFile(
                atPath: key, contents: Data(Self.line("k1", SecureRandom.bytes(32)).utf8),
                attributes: [.posixPermissions: 0o600]))
        #expect(
            FileManager.default.createFile(
                atPath: victim, contents: Data("root:secret\n".utf8), attributes: [.posixPermissions: 0o640]))
        #expect(chown(key, 65534, 65534) == 0)
        return (folder, key, victim)
    }

    private static func owner(_ path: String) -> uid_t? {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_uid : nil
    }

    @Test(
        "keys rotate as root refuses a lock file planted as a symbolic link or a hard link, and hands no file to the key file's owner",
        .enabled(if: getuid() == 0))
    func plantedLockFile() throws {
        // A link to a file: the rotation used to open it and chown it to the service account.
        for plant in [
            { (target: String, at: String) in symlink(target, at) },
            { (target: String, at: String) in link(target, at) },
        ] {
            let (folder, key, victim) = try Self.plantedRing()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            #expect(plant(victim, key + ".lock") == 0)
            let before = try String(contentsOfFile: key, encoding: .utf8)
            #expect(throws: ConfigurationParser.Failure.self) { try KeyRingCommand.rotate(key) }
            #expect(Self.owner(victim) == 0, "the victim stays root's")
            #expect(try String(contentsOfFile: key, encoding: .utf8) == before, "the ring is unchanged")
        }
        // A dangling link: root used to create the file it names, owned by the service account.
        let (folder, key, _) = try Self.plantedRing()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let elsewhere = folder + "/ld.so.preload"
        #expect(symlink(elsewhere, key + ".lock") == 0)
        #expect(throws: ConfigurationParser.Failure.self) { try KeyRingCommand.rotate(key) }
        #expect(!FileManager.default.fileExists(atPath: elsewhere))
        // Removed, the rotation goes ahead, and the lock file it creates is the key file owner's.
        unlink(key + ".lock")
        #expect(try KeyRingCommand.rotate(key).id == "k2")
        #expect(Self.owner(key) == 65534 && Self.owner(key + ".lock") == 65534)
    }

    @Test(
        "keys rotate as root refuses a key file that is a symbolic link or has a second link, and copies no other file's owner",
        .enabled(if: getuid() == 0))
    func linkedKeyFile() throws {
        let (folder, key, victim) = try Self.plantedRing()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let linked = folder + "/linked.key"
        let hard = folder + "/hard.key"
        #expect(symlink(key, linked) == 0 && link(key, hard) == 0)
        for path in [linked, hard] {
            do {
                _ = try KeyRingCommand.rotate(path)
                Issue.record("\(path) was rotated")
            } catch let failure as ConfigurationParser.Failure {
                #expect(
                    failure.description.contains("symbolic link") || failure.description.contains("2 links"),
                    "\(failure)")
            }
        }
        #expect(Self.owner(victim) == 0 && Self.owner(key) == 65534)
        #expect(try KeyRing(path: linked).activeID == "k1", "serving still reads a ring through a link")
    }

    @Test(
        "re-sealing moves secrets to the active key, and counts those under a key the file lacks as remaining",
        arguments: Backend.all)
    func reseal(backend: Backend) throws {
        try backend.withServer { server throws in
            _ = try MFAClient(server, email: "reseal@example.com").enrollTOTP()
            let sealed = try #require(server.services.factors.totp.sealer?.entries.last)
            let log = LogCapture()
            func pass(_ entries: [KeyFile.Entry]) throws -> SecretResealer.Report {
                try SecretResealer(
                    transactions: server.services.transactions, ring: try KeyRing(entries: entries), logger: log.logger,
                    grace: 0
                ).pass()
            }
            let fresh = KeyFile.Entry(id: "k9", created: .distantPast, key: SecureRandom.bytes(32))
            // A ring without the key that sealed it: nothing moves, and the row keeps the older keys alive.
            let lacking = try pass([KeyFile.Entry(id: "k5", created: .distantPast, key: SecureRandom.bytes(32)), fresh])
            // Two rows hold the secret: the factor, and its finished enrollment (kept until housekeeping).
            #expect(lacking.resealed == 0 && lacking.remaining == 2, "\(lacking)")
            #expect(log.all.contains { $0.contains("reseal_unknown_key") })
            let moved = try pass([sealed, fresh])
            #expect(moved == SecretResealer.Report(resealed: 2, remaining: 0, retired: []), "\(moved)")
            #expect(try pass([sealed, fresh]) == SecretResealer.Report(resealed: 0, remaining: 0, retired: []))
        }
    }
}
