import API
import CommandLineKit
import Foundation
import Glibc
import Logging
import Store

/// `trifactord`'s verbs. Each checks its input before any work and reports
/// a failure as one plain sentence on standard error with a non-zero exit.
package enum Trifactord {
    static let usage = """
        Usage: trifactord COMMAND [OPTIONS]

        Trifactor's server: accounts, sessions and multi-factor authentication over HTTP.

        Commands:
          serve        Run the HTTP server (on SQLite, backs up and applies pending migrations first)
          migrate      Apply pending database migrations and exit [--check: list them, exit 1 if any]
          audit tail   Print the most recent audit log events [--limit N] [--json]
          users list   Print the accounts [--limit N] [--json]
          users find|show|disable|enable|delete|reset-mfa|revoke-sessions|verify-email
                       Find (--email, --id, --phone) and help users, audited as host:<login>
          admin-keys   Keys of the admin API: create --name NAME --role read|write [--json] | list | revoke ID
          keys create  Issue an API key for the phone verification API: --name NAME [--json]
          keys list    Print the API keys [--json]
          keys revoke  Revoke an API key: keys revoke KEY
          keys rotate  Add a new key to the key ring that seals secrets at rest (older ones retire once unused)
          keys ring    The key ring: which key seals, how many secrets each holds [--json]
          backup PATH  Copy the SQLite database to PATH while it serves (SQLite's online backup API)
          clients      The OpenID Provider's relying parties: create | list | show | update | rotate-secret | delete
          webhooks     Webhook endpoints: create | list | show | update | rotate-secret | delete
          staff        Who may open the operator's console: grant EMAIL --role read|write | revoke EMAIL | list
          signing-keys The OpenID Provider's token signing keys: rotate | list [--json]
          review       Verifications held by the conversion guard: review list [--json] | release ID | drop ID
          help         Show this text; COMMAND --help shows a command's options
          probe [HOST:PORT]  Exit 0 when the server there is ready (a container's health check)
          doctor       Check the deployment, changing nothing; exit 0 all passed, 1 warnings, 2 errors [--json]
          --version    Print the version

        Every command reads the same settings (environment variable or flag):
        """

    /// Runs the command line `arguments` (without the program name); returns the exit status.
    package static func main(_ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment)
        -> Int32
    {
        // Log lines are written in batches: whatever waits goes out before the process exits.
        defer { Logger.flushStandardError() }
        guard let verb = arguments.first else {
            return fail(
                "Tell trifactord what to do: serve, migrate, audit tail, users list or keys (see trifactord --help).")
        }
        var rest = Array(arguments.dropFirst())
        switch verb {
        case "probe":
            return ProbeCommand.run(rest, environment: environment)
        case "doctor":
            if Usage.isAsked(in: rest) {
                print(
                    DoctorCommand.usage + "\n\nOptions (the settings, as for serve):\n"
                        + ConfigurationParser.helpTable())
                return 0
            }
            return DoctorCommand.run(rest, environment: environment)
        case "--version", "version":
            print("trifactord \(TrifactorVersion.current)")
            return 0
        case "--help", "-h", "help":
            print(usage + "\n" + ConfigurationParser.helpTable())
            return 0
        case "serve":
            if Usage.isAsked(in: rest) {
                print(
                    "Usage: trifactord serve [OPTIONS]\n\nRuns the HTTP server until SIGTERM or SIGINT, then finishes requests in flight and exits 0.\n\nOptions:\n"
                        + ConfigurationParser.helpTable())
                return 0
            }
            return run {
                try ServeCommand.run(
                    try ConfigurationParser.parse(arguments: rest, environment: environment, warn: false))
            }
        case "migrate":
            if Usage.isAsked(in: rest) {
                print(
                    "Usage: trifactord migrate [--check] [--database-url URL]\n\nApplies the pending numbered migrations, each in its own transaction; a SQLite database is first copied beside itself (DB.before-vN.TIME). --check only lists them, and exits 1 when there are some."
                )
                return 0
            }
            let check = rest.contains("--check")
            rest.removeAll { $0 == "--check" }
            var code: Int32 = 0
            let status = run {
                code = try MigrateCommand.run(
                    try ConfigurationParser.parse(arguments: rest, environment: environment), check: check)
            }
            return status != 0 ? status : code
        case "keys":
            if Usage.isAsked(in: rest) {
                print(
                    "Usage: trifactord keys create --name NAME [--json] | keys list [--json] | keys revoke KEY | keys rotate | keys ring [--json]"
                )
                return 0
            }
            return run { try KeysCommand.run(rest, environment: environment) }
        case "backup":
            if Usage.isAsked(in: rest) {
                print(BackupCommand.usage)
                return 0
            }
            return run { try BackupCommand.run(rest, environment: environment) }
        case "admin-keys":
            if Usage.isAsked(in: rest) {
                print(AdminCommands.keysUsage)
                return 0
            }
            return run { try AdminCommands.keys(rest, environment: environment) }
        case "users" where (["find", "show"] + AdminCommands.userActions).contains(rest.first ?? ""):
            let sub = rest.removeFirst()
            if Usage.isAsked(in: rest) {
                print(AdminCommands.usersUsage)
                return 0
            }
            return run { try AdminCommands.users(sub, rest, environment: environment) }
        case "clients":
            if Usage.isAsked(in: rest) {
                print(ClientsCommand.usage)
                return 0
            }
            return run { try ClientsCommand.run(rest, environment: environment) }
        case "webhooks":
            if Usage.isAsked(in: rest) {
                print(WebhooksCommand.usage)
                return 0
            }
            return run { try WebhooksCommand.run(rest, environment: environment) }
        case "staff":
            if Usage.isAsked(in: rest) {
                print(StaffCommand.usage)
                return 0
            }
            return run { try StaffCommand.run(rest, environment: environment) }
        case "signing-keys":
            if Usage.isAsked(in: rest) {
                print(SigningKeysCommand.usage)
                return 0
            }
            return run { try SigningKeysCommand.run(rest, environment: environment) }
        case "review":
            if Usage.isAsked(in: rest) {
                print(ReviewCommand.usage)
                return 0
            }
            return run { try ReviewCommand.run(rest, environment: environment) }
        case "audit", "users":
            let sub = rest.first ?? ""
            rest = Array(rest.dropFirst())
            guard (verb == "audit" && sub == "tail") || (verb == "users" && sub == "list") else {
                return fail(
                    verb == "audit"
                        ? "Unknown audit command \"\(sub)\": use trifactord audit tail."
                        : "Unknown users command \"\(sub)\": use users list, find, show, disable, enable, delete, reset-mfa, revoke-sessions or verify-email."
                )
            }
            if Usage.isAsked(in: rest) {
                print("Usage: trifactord \(verb) \(sub) [--limit N] [--json] [--database-url URL]")
                return 0
            }
            return run {
                let (listing, remaining) = try ListingOptions.parse(rest)
                let config = try ConfigurationParser.parse(arguments: remaining, environment: environment)
                if verb == "audit" {
                    try ListCommands.auditTail(config, listing)
                } else {
                    try ListCommands.usersList(config, listing)
                }
            }
        default:
            return fail(
                "Unknown command \"\(verb)\": use serve, migrate, doctor, audit tail, users, keys, admin-keys, clients, webhooks, staff, signing-keys, backup or review (see trifactord --help)."
            )
        }
    }

    private static func run(_ body: () throws -> Void) -> Int32 {
        do {
            try body()
            return 0
        } catch let error as StoreError where error.kind == .exposedFile {
            return fail("The database cannot be used safely: \(error.detail).")
        } catch let error as StoreError {
            return fail(
                "The database cannot be used: \(error.description). Check TRIFACTOR_DATABASE_URL or --database-url.")
        } catch {
            return fail(String(describing: error))
        }
    }

    static func fail(_ sentence: String) -> Int32 {
        FileHandle.standardError.write(Data(("trifactord: " + sentence + "\n").utf8))
        return 2
    }
}

/// `--limit N` and `--json` of the listing commands.
struct ListingOptions {
    var limit = 20
    var json = false

    /// The listing's options out of `arguments`, each `--limit` checked as it comes, and every other word (settings
    /// and words alike) in order.
    static func parse(_ arguments: [String]) throws -> (ListingOptions, [String]) {
        var reader = ArgumentReader(arguments, valued: ["limit"], flags: ["json"], layout: .sharedWithSettings)
        var options = ListingOptions()
        var rest: [String] = []
        let refused = UsageError("--limit needs a whole number from 1 to 10000.")
        do {
            while let item = try reader.next() {
                switch item {
                case .flag: options.json = true
                case .option(_, let text):
                    guard let n = Int(text), (1...10_000).contains(n) else { throw refused }
                    options.limit = n
                case .word(let word): rest.append(word)
                case .passedOn(let words): rest += words
                }
            }
        } catch {
            // The reader refuses only a --limit without its value: the same sentence as a wrong one.
            throw refused
        }
        return (options, rest)
    }
}
