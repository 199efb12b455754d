import API
import CommandLineKit
import Core
import Crypto
import Foundation
import Logging
import Messaging
import Store

/// `trifactord admin-keys create --name NAME --role read|write [--json] | list [--json] | revoke ID`
/// and `trifactord users find|show|disable|enable|delete|reset-mfa|revoke-sessions|verify-email`:
/// the admin API's operations for an operator on the host, audited as `host:<login>`.
enum AdminCommands {
    static let keysUsage =
        "Usage: trifactord admin-keys create --name NAME --role read|write [--json] | admin-keys list [--json] | admin-keys revoke ID"
    static let usersUsage = """
        Usage: trifactord users list [--limit N] [--json]
               trifactord users find (--email EMAIL | --id ID | --phone NUMBER) [--json]
               trifactord users show ID [--json]
               trifactord users disable|enable|delete|reset-mfa|revoke-sessions|verify-email ID
        """
    static let userActions = ["disable", "enable", "delete", "reset-mfa", "revoke-sessions", "verify-email"]

    static func keys(_ arguments: [String], environment: [String: String]) throws {
        guard let sub = arguments.first, ["create", "list", "revoke"].contains(sub) else {
            throw ConfigurationParser.Failure(description: keysUsage)
        }
        let o = try Arguments(
            Array(arguments.dropFirst()), valued: ["name", "role"], flags: ["json"], layout: .sharedWithSettings)
        try o.atMost(sub == "revoke" ? 1 : 0, see: "trifactord admin-keys --help")
        let config = try ConfigurationParser.parse(arguments: o.passedOn, environment: environment)
        let keys = AdminKeys(random: SecureRandom.source, clock: .system)
        try ListCommands.withDatabase(config) { database in
            switch sub {
            case "create":
                let name = (o.value("name") ?? "").trimmingCharacters(in: .whitespaces)
                guard (1...64).contains(name.count), !name.contains(" "),
                    !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
                else {
                    throw ConfigurationParser.Failure(
                        description:
                            "Give the admin key a name of 1 to 64 characters without spaces with --name: the audit log records it."
                    )
                }
                guard let role = o.value("role").flatMap(AdminRole.init(rawValue:)) else {
                    throw ConfigurationParser.Failure(
                        description: "Say what the key may do with --role read or --role write.")
                }
                let (key, token) = try database.transaction { try keys.create(name: name, role: role, on: $0) }
                if o.has("json") {
                    try printJSON(["id": key.id, "name": key.name, "role": key.role.rawValue, "token": token])
                } else {
                    print(
                        "Admin key \(key.id) (\(key.role.rawValue)) for \(key.name):\n\(token)\nSend it as Authorization: Bearer. It is shown only now: store it safely."
                    )
                }
            case "list":
                let all = try database.read { try keys.list(on: $0) }
                if o.has("json") {
                    try printJSON(
                        all.map {
                            [
                                "id": $0.id, "name": $0.name, "role": $0.role.rawValue,
                                "created_at": WireJSON.format(Date(millis: $0.createdAt)),
                                "revoked_at": $0.revokedAt.map { WireJSON.format(Date(millis: $0)) } ?? NSNull(),
                            ] as [String: Any]
                        })
                } else if all.isEmpty {
                    print(
                        "There are no admin keys yet: trifactord admin-keys create --name NAME --role read|write makes one."
                    )
                } else {
                    for k in all {
                        print(
                            "\(k.id)  \(k.role.rawValue.padding(toLength: 5, withPad: " ", startingAt: 0))  \(k.revokedAt == nil ? "live   " : "revoked")  \(k.name)"
                        )
                    }
                }
            default:
                guard let id = o.words.first else {
                    throw ConfigurationParser.Failure(
                        description: "Say which admin key to revoke: admin-keys revoke ID.")
                }
                guard try database.transaction({ try keys.revoke(id: id, on: $0) }) else {
                    throw ConfigurationParser.Failure(description: "There is no live admin key \(id).")
                }
                print("Revoked admin key \(id): requests with it are refused from now on.")
            }
        }
    }

    static func users(_ sub: String, _ arguments: [String], environment: [String: String]) throws {
        let o = try Arguments(
            arguments, valued: ["email", "id", "phone"], flags: ["json"], layout: .sharedWithSettings)
        try o.atMost(sub == "find" ? 0 : 1, see: "trifactord users --help")
        let config = try ConfigurationParser.parse(arguments: o.passedOn, environment: environment)
        let json = o.has("json")
        try ListCommands.withDatabase(config) { database in
            let logger = Logger { _ in }
            let outbox = Outbox(
                random: SecureRandom.source,
                texts: MessageTexts(
                    catalog: MessageCatalog.bundled.fallingBack(to: config.messageLanguage),
                    brand: config.totpIssuer, maxSegments: config.smsMaxSegments))
            let service = AdminService(
                transactions: Transactions(database: database, logger: logger), clock: .system, outbox: outbox,
                changes: ChangeFeed.live(local: { _ in }, database: database, logger: logger),
                policies: SessionPolicies(aal1: config.sessions, aal2: config.sessionsAAL2),
                testBook: TestNumberBook(configured: config.verify.testNumbers))
            let login = environment["SUDO_USER"] ?? environment["USER"] ?? "operator"
            let actor = AdminService.Actor(
                name: "host:\(login)", client: AuditContext(ip: "local", userAgent: "trifactord"))
            do {
                try run(sub, o, json: json, service: service, actor: actor)
            } catch AdminFailure.userNotFound {
                throw ConfigurationParser.Failure(description: "There is no user \(o.words.first ?? "").")
            } catch let failure as CommonFailure {
                if case .invalidFields(let fields) = failure {
                    throw ConfigurationParser.Failure(
                        description: CommandOutput.sentence(fields))
                }
                throw ConfigurationParser.Failure(description: "The database is not available now: try again.")
            }
        }
    }

    private static func run(
        _ sub: String, _ options: Arguments, json: Bool, service: AdminService, actor: AdminService.Actor
    ) throws {
        func summary(_ u: UserRecord) -> [String: Any] {
            [
                "id": u.id.raw, "email": u.email, "display_name": u.displayName ?? NSNull(),
                "email_verified": u.emailVerifiedAt != nil,
                "disabled": u.disabledAt != nil, "created_at": WireJSON.format(Date(millis: u.createdAt)),
            ]
        }
        func line(_ u: UserRecord) -> String {
            "\(u.id.raw)  \(u.email)  \(u.emailVerifiedAt == nil ? "unverified" : "verified")\(u.disabledAt == nil ? "" : "  DISABLED")"
        }
        switch sub {
        case "find":
            let users = try service.find(
                email: options.value("email"), id: options.value("id"), phone: options.value("phone"), actor: actor)
            if json {
                try printJSON(users.map(summary))
            } else if users.isEmpty {
                print("No user matches.")
            } else {
                for user in users { print(line(user)) }
            }
        case "show":
            guard let id = options.words.first else {
                throw ConfigurationParser.Failure(description: "Say whose account: users show ID.")
            }
            let (user, factors, sessions) = try service.show(UserID(id), actor: actor)
            if json {
                var object = summary(user)
                object["factors"] = factors.map {
                    ["id": $0.id.raw, "kind": $0.kind.rawValue, "display_name": $0.displayName]
                }
                object["sessions"] = sessions.map {
                    [
                        "id": $0.id.raw, "aal": $0.aal.rawValue, "ip": $0.ip ?? NSNull(),
                        "user_agent": $0.userAgent ?? NSNull(),
                    ] as [String: Any]
                }
                try printJSON(object)
            } else {
                print(line(user))
                for f in factors { print("  factor   \(f.id.raw)  \(f.kind.rawValue)  \(f.displayName)") }
                for s in sessions {
                    print("  session  \(s.id.raw)  aal\(s.aal.rawValue)  \(s.ip ?? "-")  \(s.userAgent ?? "-")")
                }
            }
        default:
            guard let id = options.words.first else {
                throw ConfigurationParser.Failure(description: "Say whose account: users \(sub) ID.")
            }
            let user = UserID(id)
            let result: AdminActionResult
            switch sub {
            case "disable": result = try service.disable(user, actor: actor)
            case "enable": result = try service.enable(user, actor: actor)
            case "delete": result = try service.delete(user, actor: actor)
            case "reset-mfa": result = try service.resetMFA(user, actor: actor)
            case "revoke-sessions": result = try service.revokeSessions(user, actor: actor)
            default: result = try service.markEmailVerified(user, actor: actor)
            }
            if json {
                try printJSON([
                    "user_id": result.userID, "action": result.action, "sessions_ended": result.sessionsEnded,
                    "factors_removed": result.factorsRemoved,
                ])
            } else {
                print(
                    "\(sub) \(id): done; sessions ended: \(result.sessionsEnded), second factors removed: \(result.factorsRemoved)."
                )
            }
        }
    }

    private static func printJSON(_ object: Any) throws { try CommandOutput.printJSON(object) }
}

/// What commands print for scripts.
enum CommandOutput {
    /// Invalid fields as one sentence for a person: "Name reason; other reason."
    static func sentence(_ fields: [FieldProblem]) -> String {
        fields.map { "\($0.name) \($0.reason)" }.joined(separator: "; ").capitalizedFirst + "."
    }

    /// `object` as one line of JSON with sorted keys.
    static func printJSON(_ object: Any) throws {
        print(
            String(
                decoding: try JSONSerialization.data(
                    withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]),
                as: UTF8.self))
    }
}

extension String {
    /// The sentence with its first letter capitalised.
    var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}
