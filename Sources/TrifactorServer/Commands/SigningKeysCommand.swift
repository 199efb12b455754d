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
    static let usage = """
        Usage: trifactord signing-keys rotate [--activate-after SECONDS] [--json] | signing-keys list [--json]

        rotate publishes new ES256 and RS256 keys at once and signs with them after SECONDS (default 120: every
        instance re-reads the keys within 10 s and relying parties' copies of the key set expire within 60 s);
        the old keys sign until then and stay published for a day. 0 switches at once (one instance, no cached sets).
        """

    static func run(_ arguments: [String], environment: [String: String]) throws {
        guard let sub = arguments.first, ["rotate", "list"].contains(sub) else {
            throw ConfigurationParser.Failure(description: usage)
        }
        let o = try Arguments(
            Array(arguments.dropFirst()), valued: ["activate-after"], flags: ["json"], layout: .sharedWithSettings)
        var after = SigningKeys.defaultActivation
        if let text = o.value("activate-after") {
            guard let seconds = Double(text), (0...86_400).contains(seconds) else {
                throw ConfigurationParser.Failure(
                    description: "--activate-after must be a number of seconds from 0 to 86400.")
            }
            after = seconds
        }
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
                let fresh = try keys.rotate(activatingAfter: after)
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
                    print(
                        "New signing keys \(fresh.joined(separator: ", ")) are published and sign in \(Int(after)) s; the old ones sign until then and stay published for a day."
                    )
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
                            "kid": $0.0, "alg": $0.1, "active_from": $0.2 / 1000,
                            "retired_at": $0.3.map { $0 / 1000 } as Any? ?? NSNull(),
                        ] as [String: Any]
                    })
            } else if rows.isEmpty {
                print("No signing keys yet: trifactord serve --oidc 1 makes them at its first token.")
            } else {
                let now = Clock.system.now().millis
                for r in rows {
                    let state =
                        r.2 > now ? "signs later" : (r.3.map { $0 <= now } ?? false) ? "retired (published)" : "signs"
                    print("\(r.0)  \(r.1)  \(state)")
                }
            }
        }
    }
}
