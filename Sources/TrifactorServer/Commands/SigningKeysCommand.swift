import CommandLineKit
import Core
import Foundation
import Logging
import Store

/// `trifactord signing-keys rotate | list [--json]`: the OpenID Provider's
/// token signing keys. A rotation retires the active ES256 and RS256 keys and
/// makes new ones; the retired keys stay in the JWK Set for a day (longer than
/// any token they signed lives), and every instance picks the new ones up
/// within a minute.
enum SigningKeysCommand {
    static let usage = "Usage: trifactord signing-keys rotate [--json] | signing-keys list [--json]"

    static func run(_ arguments: [String], environment: [String: String]) throws {
        guard let sub = arguments.first, ["rotate", "list"].contains(sub) else {
            throw ConfigurationParser.Failure(description: usage)
        }
        let o = try Arguments(Array(arguments.dropFirst()), flags: ["json"], layout: .sharedWithSettings)
        try o.atMost(0, see: "trifactord signing-keys --help")
        let config = try ConfigurationParser.parse(arguments: o.passedOn, environment: environment)
        guard FileManager.default.fileExists(atPath: config.keyFile),
            let ring = try KeyFile.load(config, logger: Logger { _ in })
        else {
            throw ConfigurationParser.Failure(
                description: "There is no key file at \(config.keyFile): the signing keys are sealed with it.")
        }
        try ListCommands.withDatabase(config) { database in
            let transactions = Transactions(database: database, logger: Logger { _ in })
            let keys = SigningKeys(transactions: transactions, sealer: ring, clock: .system)
            if sub == "rotate" {
                let fresh = try keys.rotate()
                try transactions.write { db in
                    try AuditLog.append(
                        AuditContext(ip: "local", userAgent: "trifactord").event(
                            .oidcSigningKeyRotated, .success,
                            detail: "kids=\(fresh.joined(separator: "+")) by=host:\(environment["USER"] ?? "operator")"),
                        at: Clock.system.now().millis, on: db)
                }
                if o.has("json") {
                    try CommandOutput.printJSON(["kids": fresh])
                } else {
                    print("New signing keys \(fresh.joined(separator: ", ")); the old ones stay published for a day.")
                }
                return
            }
            let rows = try transactions.read { db in
                try db.query(
                    "SELECT kid, alg, created_at, retired_at FROM oidc_signing_keys ORDER BY created_at, kid", []
                )
                .map {
                    (try $0.text("kid"), try $0.text("alg"), try $0.int("created_at"), try $0.optionalInt("retired_at"))
                }
            }
            if o.has("json") {
                try CommandOutput.printJSON(
                    rows.map {
                        [
                            "kid": $0.0, "alg": $0.1, "created_at": $0.2 / 1000,
                            "retired_at": $0.3.map { $0 / 1000 } as Any? ?? NSNull(),
                        ] as [String: Any]
                    })
            } else if rows.isEmpty {
                print("No signing keys yet: trifactord serve --oidc 1 makes them at its first token.")
            } else {
                for r in rows { print("\(r.0)  \(r.1)  \(r.3 == nil ? "active" : "retired")") }
            }
        }
    }
}
