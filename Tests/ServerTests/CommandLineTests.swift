import Foundation
import Glibc
import ServerTestSupport
import Store
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

/// `trifactord` as an operator runs it: a real process.
@Suite("trifactord command line")
struct CommandLineTests {
    /// The built `trifactord` next to the test bundle.
    static let binary = built("trifactord")

    /// The built executable `name` (`trifactord`, `trifactor`) next to the test bundle.
    static func built(_ name: String) -> URL {
        let here = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [here, here.deletingLastPathComponent()] {
            let url = candidate.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent(".build/debug/\(name)")
    }

    struct Run {
        let status: Int32
        let out: String
        let err: String
    }

    static func run(_ arguments: [String], environment: [String: String] = [:], program: URL = binary) throws -> Run {
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        process.environment = ["PATH": "/usr/bin:/bin"].merging(environment) { $1 }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // A command that should have failed at once must not hang the suite.
        DispatchQueue.global().asyncAfter(deadline: .now() + 60) { if process.isRunning { process.terminate() } }
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(
            status: process.terminationStatus, out: String(decoding: o, as: UTF8.self),
            err: String(decoding: e, as: UTF8.self))
    }

    static func temporaryDatabase() -> String {
        "sqlite:" + FileManager.default.temporaryDirectory.appendingPathComponent("cli-\(UUID().uuidString)/t.db").path
    }

    @Test("--help and serve --help document every setting")
    func help() throws {
        for args in [["--help"], ["serve", "--help"]] {
            let r = try Self.run(args)
            #expect(r.status == 0)
            for name in [
                "TRIFACTOR_DATABASE_URL", "TRIFACTOR_LISTEN", "TRIFACTOR_DEV", "TRIFACTOR_MAX_BODY_BYTES",
                "TRIFACTOR_SESSION_IDLE_TIMEOUT",
                "--database-url", "--listen", "--dev",
            ] {
                #expect(r.out.contains(name), "\(args) should mention \(name)")
            }
        }
    }

    @Test("bad verbs, flags and values fail with one sentence and a non-zero exit")
    func badInput() throws {
        for (args, env, words) in [
            (["frobnicate"], [:], "Unknown command"),
            ([], [:], "Tell trifactord what to do"),
            (["serve", "--no-such-flag"], [:], "Unknown option --no-such-flag"),
            (["serve", "--listen", "nonsense"], [:], "127.0.0.1:8080"),
            (["serve"], ["TRIFACTOR_DEV": "maybe"], "TRIFACTOR_DEV must be 0 or 1"),
            (["migrate", "--database-url", "mysql://x"], [:], "sqlite: or postgres://"),
            (["audit", "head"], [:], "audit tail"),
            (["users", "list", "--limit", "0"], [:], "--limit"),
            (["users", "delete", "first-id", "second-id"], [:], "Unexpected argument \"second-id\""),
            (["admin-keys", "list", "extra"], [:], "Unexpected argument \"extra\""),
        ] as [([String], [String: String], String)] {
            let r = try Self.run(args, environment: env)
            #expect(r.status != 0, "\(args)")
            #expect(r.err.hasPrefix("trifactord: ") && r.err.contains(words), "\(args): \(r.err)")
            #expect(r.err.split(separator: "\n").count == 1)
        }
    }

    @Test("an unreachable database is one sentence and a non-zero exit")
    func unreachableDatabase() throws {
        let r = try Self.run(["migrate", "--database-url", "postgresql://postgres@127.0.0.1:1/postgres"])
        #expect(r.status != 0)
        #expect(r.err.hasPrefix("trifactord: "))
        #expect(r.err.split(separator: "\n").count == 1)
    }

    @Test("a database or key file that others can read stops the server with the chmod to run")
    func exposedFiles() throws {
        let db = Self.temporaryDatabase()
        let path = String(db.dropFirst("sqlite:".count))
        #expect(try Self.run(["migrate", "--database-url", db]).status == 0)
        chmod(path, 0o644)
        let exposed = try Self.run(["serve", "--database-url", db, "--listen", "127.0.0.1:0"])
        #expect(exposed.status != 0)
        #expect(exposed.err.contains("chmod 600 \(path)"), "\(exposed.err)")
        #expect(exposed.err.split(separator: "\n").count == 1)
        chmod(path, 0o600)

        let key = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("t.key").path
        try Data((Data(repeating: 7, count: 32).base64EncodedString() + "\n").utf8).write(to: URL(fileURLWithPath: key))
        chmod(key, 0o640)
        let keyExposed = try Self.run(["serve", "--database-url", db, "--listen", "127.0.0.1:0", "--key-file", key])
        #expect(keyExposed.status != 0)
        #expect(keyExposed.err.contains("chmod 600 \(key)"), "\(keyExposed.err)")
    }

    @Test("migrate applies the schema once; audit tail and users list read it")
    func migrateAndList() throws {
        let db = Self.temporaryDatabase()
        let first = try Self.run(["migrate", "--database-url", db])
        #expect(first.status == 0)
        #expect(first.out.contains("Applied migrations 1"))
        #expect(try Self.run(["migrate", "--database-url", db]).out.contains("up to date"))
        #expect(try Self.run(["users", "list", "--database-url", db]).out.contains("no accounts"))
        #expect(try Self.run(["audit", "tail"], environment: ["TRIFACTOR_DATABASE_URL": db]).out.contains("empty"))
    }

    @Test("review lists what the conversion guard holds; releasing what is not held is one sentence and exit 2")
    func review() throws {
        let db = Self.temporaryDatabase()
        #expect(try Self.run(["review", "list", "--database-url", db]).out.contains("Nothing is held for review."))
        let json = try Self.run(["review", "list", "--json", "--database-url", db])
        #expect(
            json.status == 0 && json.out.trimmingCharacters(in: .whitespacesAndNewlines) == "[]",
            "\(json.status) \(json.out) \(json.err)")
        let unknown = try Self.run(["review", "release", "3fa85f64-5717-4562-b3fc-2c963f66afa6", "--database-url", db])
        #expect(
            unknown.status == 2
                && unknown.err.contains("No verification 3fa85f64-5717-4562-b3fc-2c963f66afa6 is held for review"))
        let bad = try Self.run(["review", "drop", "--database-url", db])
        #expect(bad.status == 2 && bad.err.contains("Name the verification"))
        #expect(try Self.run(["review", "approve"]).err.contains("use list, release or drop"))
    }

    @Test("SIGTERM stops accepting, finishes the request in flight, and exits 0")
    func gracefulStop() throws {
        let db = Self.temporaryDatabase()
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = [
            "serve", "--listen", "127.0.0.1:0", "--database-url", db, "--argon2-memory-kib", "8192",
            "--argon2-opslimit", "1",
        ]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        // The port is in the "listening" log line.
        var port = 0
        var seen = ""
        let reader = err.fileHandleForReading
        while port == 0 {
            let chunk = reader.availableData
            try #require(!chunk.isEmpty, "trifactord exited early: \(seen)")
            seen += String(decoding: chunk, as: UTF8.self)
            if let line = seen.split(separator: "\n").first(where: { $0.contains("\"event\":\"listening\"") }),
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            {
                port = object["port"] as? Int ?? 0
            }
        }
        let idle = try HTTPTestClient(port: port)
        #expect(try idle.request("GET", "/health").status == 200)

        let body = Array(#"{"email":"sigterm@example.com","password":"correct horse battery"}"#.utf8)
        let client = try HTTPTestClient(port: port)
        try client.send(
            HTTPTestClient.head(
                "POST", "/v1/accounts", headers: ["Content-Type": "application/json"], contentLength: body.count)
                + body.prefix(10))
        usleep(200_000)
        kill(process.processIdentifier, SIGTERM)
        usleep(300_000)
        #expect(process.isRunning, "the server must wait for the request in flight")
        try client.send(Array(body.dropFirst(10)))
        let response = try client.readResponse()
        #expect(response.status == 202)
        #expect(response.header("connection")?.lowercased() == "close", "keep-alive clients are told to leave")
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect((try? HTTPTestClient(port: port)) == nil, "nothing listens once stopped")
        let log = seen + String(decoding: reader.readDataToEndOfFile(), as: UTF8.self)
        #expect(log.contains("\"event\":\"stopped\""))
    }
}

@Suite("Documentation")
struct DocumentationTests {
    @Test("the configuration page's table names every setting with its flag")
    func configurationTable() throws {
        let page = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("docs/operations/configuration.md")
        let text = try String(contentsOf: page, encoding: .utf8)
        let help = try CommandLineTests.run(["serve", "--help"]).out
        // Lines of the form "env TRIFACTOR_X, default …".
        let variables = help.split(separator: "\n").compactMap { line -> String? in
            let words = line.split(separator: " ")
            guard let env = words.firstIndex(of: "env"), env + 1 < words.count else { return nil }
            return String(words[env + 1].dropLast())
        }
        #expect(variables.count == Setting.all.count)
        for variable in variables {
            #expect(text.contains("| `\(variable)` |"), "docs/operations/configuration.md lacks \(variable)")
        }
    }
}

extension CommandLineTests {
    @Test("migrate --check lists what is pending and exits 1, then 0 once migrate has run")
    func migrateCheck() throws {
        let url = Self.temporaryDatabase()
        let database = try Store.openDatabase(url: url, poolSize: 1)
        try database.migrate(Array(Schema.migrations.sorted { $0.version < $1.version }.prefix(3)))
        database.close()
        let pending = try Self.run(["migrate", "--check", "--database-url", url])
        #expect(pending.status == 1 && pending.out.hasPrefix("Pending migrations: 4 ("), "\(pending.out)\(pending.err)")
        let applied = try Self.run(["migrate", "--database-url", url])
        #expect(applied.status == 0 && applied.out.hasPrefix("Applied migrations 4, "), "\(applied.out)\(applied.err)")
        #expect(applied.err.contains("backup_before_migration"), "the copy is logged with its path")
        let done = try Self.run(["migrate", "--check", "--database-url", url])
        #expect(done.status == 0 && done.out == "The database is up to date.\n")
    }

    @Test(
        "under systemd (Type=notify), serve asks for time while it migrates, says READY=1 once it listens and STOPPING=1 on SIGTERM"
    )
    func systemdNotify() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("notify").path
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try #require(bound == 0)
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        func receive() -> String {
            var buffer = [UInt8](repeating: 0, count: 512)
            let count = recv(fd, &buffer, buffer.count, 0)
            return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : ""
        }

        let process = Process()
        process.executableURL = Self.binary
        process.arguments = [
            "serve", "--listen", "127.0.0.1:0", "--database-url", Self.temporaryDatabase(), "--argon2-memory-kib",
            "8192", "--argon2-opslimit", "1",
        ]
        process.environment = ["PATH": "/usr/bin:/bin", "NOTIFY_SOCKET": path]
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        // A new database is migrated first: systemd is asked for time (a large one may outlast the start timeout).
        let migrating = receive()
        #expect(migrating.hasPrefix("STATUS=Applying"), "\(migrating)")
        let extended = migrating.split(separator: "\n").first { $0.hasPrefix("EXTEND_TIMEOUT_USEC=") }
        #expect(Int(extended?.dropFirst("EXTEND_TIMEOUT_USEC=".count) ?? "").map { $0 >= 600_000_000 } == true)
        let ready = receive()
        #expect(ready.hasPrefix("READY=1\nSTATUS=Serving on 127.0.0.1:"), "\(ready)")
        let port = try #require(Int(ready.split(separator: ":").last ?? ""))
        #expect(try HTTPTestClient(port: port).request("GET", "/ready").status == 200, "ready means serving")
        // The container image's health check says the same.
        #expect(try Self.run(["probe", "127.0.0.1:\(port)"]).status == 0)
        kill(process.processIdentifier, SIGTERM)
        #expect(receive().hasPrefix("STOPPING=1"))
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(try Self.run(["probe", "127.0.0.1:\(port)"]).status == 1, "nothing listens: not healthy")
        #expect(try Self.run(["probe", "nonsense"]).status == 1, "a wrong address is unhealthy, with a sentence")
    }
}
