import API
import CommandLineKit
import Core
import Crypto
import Foundation
import Store

/// `trifactord keys create --name NAME [--json] | list [--json] | revoke KEY`
/// (API keys of the phone verification API), and `keys rotate | ring` (the
/// key ring that seals secrets at rest).
enum KeysCommand {
    static func run(_ arguments: [String], environment: [String: String]) throws {
        guard let sub = arguments.first, ["create", "list", "revoke", "rotate", "ring"].contains(sub) else {
            throw ConfigurationParser.Failure(
                description: "Say keys create --name NAME, keys list, keys revoke KEY, keys rotate or keys ring.")
        }
        if sub == "rotate" || sub == "ring" {
            return try KeyRingCommand.run(sub, Array(arguments.dropFirst()), environment: environment)
        }
        let o = try Arguments(
            Array(arguments.dropFirst()), valued: ["name"], flags: ["json"], layout: .sharedWithSettings)
        try o.atMost(sub == "revoke" ? 1 : 0, see: "trifactord keys --help")
        let (json, name, target, remaining) = (o.has("json"), o.value("name"), o.words.first, o.passedOn)
        let config = try ConfigurationParser.parse(arguments: remaining, environment: environment)
        try ListCommands.withDatabase(config) { database in
            try run(
                sub, name: name, target: target, json: json, keys: APIKeys(random: SecureRandom.source, clock: .system),
                database: database)
        }
    }

    private static func run(
        _ sub: String, name: String?, target: String?, json: Bool, keys: APIKeys, database: any Database
    ) throws {
        switch sub {
        case "create":
            let trimmed = name?.trimmingCharacters(in: .whitespaces) ?? ""
            guard (1...64).contains(trimmed.count),
                !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
            else {
                throw ConfigurationParser.Failure(description: "Give the key a name of 1 to 64 characters with --name.")
            }
            let (key, secret) = try database.transaction { try keys.create(name: trimmed, on: $0) }
            if json {
                print(
                    String(
                        decoding: try JSONSerialization.data(
                            withJSONObject: ["api_key": key.apiKey, "api_secret": secret, "name": key.name],
                            options: [.sortedKeys]), as: UTF8.self))
            } else {
                print(
                    "API key:    \(key.apiKey)\nAPI secret: \(secret)\nThe secret is shown only now: store it safely.")
            }
        case "list":
            let all = try database.read { try keys.list(on: $0) }
            if json {
                let objects: [[String: Any]] = all.map {
                    [
                        "api_key": $0.apiKey, "name": $0.name,
                        "created_at": WireJSON.format(Date(millis: $0.createdAt)),
                        "revoked_at": $0.revokedAt.map { WireJSON.format(Date(millis: $0)) } ?? NSNull(),
                    ]
                }
                print(
                    String(
                        decoding: try JSONSerialization.data(withJSONObject: objects, options: [.sortedKeys]),
                        as: UTF8.self))
            } else if all.isEmpty {
                print("There are no API keys yet: trifactord keys create --name NAME makes one.")
            } else {
                for k in all {
                    print(
                        "\(k.apiKey)  \(k.revokedAt == nil ? "live   " : "revoked")  \(WireJSON.format(Date(millis: k.createdAt)))  \(k.name)"
                    )
                }
            }
        default:
            guard let target else {
                throw ConfigurationParser.Failure(description: "Say which key to revoke: keys revoke KEY.")
            }
            guard try database.transaction({ try keys.revoke(apiKey: target, on: $0) }) else {
                throw ConfigurationParser.Failure(description: "There is no live API key \(target).")
            }
            print("Revoked \(target): requests with it are refused from now on.")
        }
    }
}
