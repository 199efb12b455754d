import CommandLineKit
import Crypto
import Foundation
import Logging
import Store

/// `trifactord keys rotate`: adds a new key to the key ring file; it seals
/// from now on, on every instance reading that file (within 5 s). Running
/// servers re-seal older secrets in the background and retire the older
/// keys once nothing uses them. `trifactord keys ring`: the keys, which one
/// seals, and how many secrets each holds.
enum KeyRingCommand {
    /// Adds a key under the file's lock; its id is one above the highest `kN`, so a retired id is never reused.
    static func rotate(_ path: String) throws -> (id: String, older: [String]) {
        do {
            return try KeyFile.withLock(path) {
                var entries = try KeyFile.read(path)
                let highest = entries.compactMap { Int($0.id.dropFirst()) }.max() ?? -1
                let id = "k\(highest + 1)"
                entries.append(KeyFile.Entry(id: id, created: Date(), key: SecureRandom.bytes(32)))
                try KeyFile.write(entries, to: path)
                return (id, entries.dropLast().map(\.id))
            }
        } catch let failure as KeyFile.Failure {
            throw ConfigurationParser.Failure(description: failure.description)
        }
    }

    static func run(_ sub: String, _ arguments: [String], environment: [String: String]) throws {
        let o = try Arguments(arguments, flags: ["json"], layout: .sharedWithSettings)
        try o.atMost(0, see: "trifactord keys --help")
        let json = o.has("json")
        let config = try ConfigurationParser.parse(arguments: o.passedOn, environment: environment)
        let path = config.keyFile
        guard FileManager.default.fileExists(atPath: path) else {
            throw ConfigurationParser.Failure(
                description:
                    "There is no key file at \(path): serve --dev makes one, or openssl rand -base64 32 > \(path) && chmod 600 \(path)."
            )
        }
        if sub == "rotate" {
            let (id, older) = try rotate(path)
            print(
                "Key \(id) seals new secrets from now on (servers reading \(path) pick it up within 5 s). After \(Int(config.keyRetireAfter)) s they re-seal older secrets in the background, then retire \(older.joined(separator: ", ")) once nothing uses them; keys ring shows the progress."
            )
            return
        }
        let entries: [KeyFile.Entry]
        do { entries = try KeyFile.read(path) } catch let failure as KeyFile.Failure {
            throw ConfigurationParser.Failure(description: failure.description)
        }
        let counts = try ListCommands.withDatabase(config) { database in
            try database.read { db -> [String: Int] in
                var counts: [String: Int] = [:]
                for t in SecretResealer.tables {
                    for row in try db.query("SELECT secret_sealed FROM \(t.table) WHERE secret_sealed IS NOT NULL", [])
                    {
                        if let bytes = Data(base64Encoded: try row.text("secret_sealed")) {
                            counts[KeyRing.keyID(of: Array(bytes)).id, default: 0] += 1
                        }
                    }
                }
                return counts
            }
        }
        if json {
            let objects: [[String: Any]] = entries.enumerated().map { i, e in
                [
                    "id": e.id, "created_at": e.created.formatted(.iso8601), "active": i == entries.count - 1,
                    "secrets": counts[e.id] ?? 0,
                ]
            }
            print(
                String(
                    decoding: try JSONSerialization.data(withJSONObject: objects, options: [.sortedKeys]), as: UTF8.self
                ))
        } else {
            for (i, e) in entries.enumerated() {
                print(
                    "\(e.id)  \(i == entries.count - 1 ? "seals" : "opens")  \(e.created == .distantPast ? "-" : e.created.formatted(.iso8601))  \(counts[e.id] ?? 0) secrets"
                )
            }
            let unknown = counts.keys.filter { id in !entries.contains { $0.id == id } }.sorted()
            if !unknown.isEmpty {
                print("Secrets are sealed under keys this file lacks: \(unknown.joined(separator: ", ")).")
            }
        }
    }
}
