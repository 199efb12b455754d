import CommandLineKit
import Core
import Crypto
import Foundation
import Logging
import Messaging
import Store

/// `trifactord webhooks create|list|show|update|rotate-secret|delete`: webhook endpoints, registered by the
/// operator on the host and audited as `host:<login>`. A secret is printed once, when it is made.
enum WebhooksCommand {
    static let usage = """
        Usage: trifactord webhooks create --url URL --events "TYPE …" [OPTIONS] [--json]
               trifactord webhooks update ID [OPTIONS] [--json]
               trifactord webhooks list [--json] | show ID [--json] | rotate-secret ID [--json] | delete ID

        Options of create and update (update keeps what is not given):
          --url URL               where messages are posted (https; http only to loopback with private addresses allowed)
          --events "TYPE …"       the event types it receives, or * for all:
                                  \(WebhookEventType.allCases.map(\.rawValue).joined(separator: " "))
          --description TEXT      a note for operators
          --personal-data         bodies carry the address, browser and detail of each event
          --no-personal-data      (update) no longer
          --enable | --disable    (update) resume deliveries (in order, from where they stopped) or stop them
        """

    static func run(_ arguments: [String], environment: [String: String]) throws {
        let verbs = ["create", "update", "list", "show", "rotate-secret", "delete"]
        guard let sub = arguments.first, verbs.contains(sub) else {
            throw ConfigurationParser.Failure(description: usage)
        }
        let o = try Arguments(
            Array(arguments.dropFirst()), valued: ["url", "events", "description"],
            flags: ["json", "personal-data", "no-personal-data", "enable", "disable"], layout: .sharedWithSettings)
        try o.atMost(["create", "list"].contains(sub) ? 0 : 1, see: "trifactord webhooks --help")
        let config = try ConfigurationParser.parse(arguments: o.passedOn, environment: environment)
        let ring =
            FileManager.default.fileExists(atPath: config.keyFile)
            ? try KeyFile.load(config, logger: Logger { _ in }) : nil
        let actor = "host:\(environment["SUDO_USER"] ?? environment["USER"] ?? "operator")"
        let audit = AuditContext(ip: "local", userAgent: "trifactord")
        try ListCommands.withDatabase(config) { database in
            let service = WebhookService(
                transactions: Transactions(database: database, logger: Logger { _ in }), clock: .system,
                random: SecureRandom.source, sealer: ring,
                sender: WebhookSender(allowPrivate: config.webhooksAllowPrivate, timeout: config.webhooksTimeout))
            do {
                switch sub {
                case "create":
                    let registered = try service.create(try draft(o), audit: audit, actor: actor)
                    try show(registered.endpoint, secret: registered.secret, json: o.has("json"))
                case "update":
                    let id = try o.word(0, "the endpoint to update: webhooks update ID")
                    try show(
                        try service.update(id, with: try draft(o), audit: audit, actor: actor), secret: nil,
                        json: o.has("json"))
                case "list":
                    let all = try service.list()
                    if o.has("json") {
                        try CommandOutput.printJSON(all.map(\.object))
                    } else if all.isEmpty {
                        print(
                            "There are no webhook endpoints yet: trifactord webhooks create --url URL --events '*' makes one."
                        )
                    } else {
                        for e in all {
                            print("\(e.id)  \(e.status.rawValue)  \(e.url)  \(e.eventTypes.joined(separator: ","))")
                        }
                    }
                case "show":
                    try show(
                        try service.find(try o.word(0, "the endpoint to show: webhooks show ID")), secret: nil,
                        json: o.has("json"))
                case "rotate-secret":
                    let id = try o.word(0, "the endpoint: webhooks rotate-secret ID")
                    let secret = try service.rotateSecret(id, audit: audit, actor: actor)
                    if o.has("json") {
                        try CommandOutput.printJSON(["id": id, "secret": secret])
                    } else {
                        print(
                            "New secret of \(id) (the old one signs too for a day):\n\(secret)\nIt is shown only now: store it safely."
                        )
                    }
                default:
                    let id = try o.word(0, "the endpoint to delete: webhooks delete ID")
                    try service.delete(id, audit: audit, actor: actor)
                    print("Deleted webhook endpoint \(id), with its undelivered messages.")
                }
            } catch WebhookFailure.notFound {
                throw ConfigurationParser.Failure(description: "There is no webhook endpoint \(o.words.first ?? "").")
            } catch WebhookFailure.noKeyFile {
                throw ConfigurationParser.Failure(
                    description: "There is no key file at \(config.keyFile): webhook secrets are sealed with it.")
            } catch CommonFailure.invalidFields(let fields) {
                throw ConfigurationParser.Failure(
                    description: fields.map { "--\(option($0.name)) \($0.reason)." }.joined(separator: " "))
            }
        }
    }

    /// The CLI option a service field comes from.
    private static func option(_ field: String) -> String {
        switch field {
        case "event_types": "events"
        default: field
        }
    }

    /// What the options ask for.
    /// - Throws: a usage sentence for contradictory flags.
    private static func draft(_ o: Arguments) throws -> WebhookService.Draft {
        guard !(o.has("personal-data") && o.has("no-personal-data")), !(o.has("enable") && o.has("disable")) else {
            throw ConfigurationParser.Failure(
                description: "Give --personal-data or --no-personal-data, --enable or --disable, not both.")
        }
        var draft = WebhookService.Draft()
        draft.url = o.value("url")
        draft.description = o.value("description")
        draft.eventTypes = try o.value("events").map { try WebhookEventType.parse($0) }
        if o.has("personal-data") { draft.personalData = true }
        if o.has("no-personal-data") { draft.personalData = false }
        if o.has("enable") { draft.enabled = true }
        if o.has("disable") { draft.enabled = false }
        return draft
    }

    /// Prints an endpoint, and its secret when it was just made.
    private static func show(_ e: WebhookEndpoint, secret: String?, json: Bool) throws {
        if json {
            var object = e.object
            if let secret { object["secret"] = secret }
            try CommandOutput.printJSON(object)
            return
        }
        print("\(e.id)  \(e.status.rawValue)\n  url: \(e.url)\n  events: \(e.eventTypes.joined(separator: " "))")
        print("  personal data: \(e.personalData ? "yes" : "no")")
        if !e.description.isEmpty { print("  description: \(e.description)") }
        if let reason = e.disabledReason { print("  disabled: \(reason)") }
        if let secret { print("Secret (shown only now: store it safely):\n\(secret)") }
    }
}
