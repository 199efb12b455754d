import API
import CommandLineKit
import Core
import Foundation
import Logging
import Store

/// `trifactord staff grant|revoke|list`: who may open the operator's console (`/console`), made on the host and
/// audited as `host:<login>`. A staff member is an ordinary account; the role works as an admin key's does.
enum StaffCommand {
    static let usage = """
        Usage: trifactord staff grant EMAIL --role read|write [--json]
               trifactord staff revoke EMAIL
               trifactord staff list [--json]

        Staff sign in to /console with their own account and a second factor; `read` lets them look up accounts,
        the audit log, clients, webhooks and test numbers; `write` also lets them act on accounts (with a passkey or
        device key proven within 5 minutes, and a reason that goes into the audit log).
        """

    /// Runs `staff grant|revoke|list`; a refusal is one sentence and a non-zero exit.
    static func run(_ arguments: [String], environment: [String: String]) throws {
        guard let sub = arguments.first, ["grant", "revoke", "list"].contains(sub) else {
            throw ConfigurationParser.Failure(description: usage)
        }
        let o = try Arguments(
            Array(arguments.dropFirst()), valued: ["role"], flags: ["json"], layout: .sharedWithSettings)
        try o.atMost(sub == "list" ? 0 : 1, see: "trifactord staff --help")
        var role: AdminRole?
        if sub == "grant" {
            guard let given = o.value("role") else {
                throw ConfigurationParser.Failure(description: "Give the staff member's role: --role read or write.")
            }
            guard let known = AdminRole(rawValue: given) else {
                throw ConfigurationParser.Failure(description: "--role must be read or write, not \"\(given)\".")
            }
            role = known
        }
        let email = sub == "list" ? "" : try o.word(0, "the staff member's email: staff \(sub) EMAIL")
        let config = try ConfigurationParser.parse(arguments: o.passedOn, environment: environment)
        let actor = "host:\(environment["SUDO_USER"] ?? environment["USER"] ?? "operator")"
        try ListCommands.withDatabase(config) { database in
            let service = StaffService(
                transactions: Transactions(database: database, logger: Logger { _ in }), clock: .system)
            do {
                switch (sub, role) {
                case ("grant", let role?):
                    let member = try service.grant(email: email, role: role, actor: actor)
                    if o.has("json") {
                        try CommandOutput.printJSON(object(member))
                    } else {
                        print("\(member.email) is staff with the \(member.role.rawValue) role.")
                    }
                case ("revoke", _):
                    try service.revoke(email: email, actor: actor)
                    print("\(email) is no longer staff.")
                default:
                    let all = try service.list()
                    if o.has("json") {
                        try CommandOutput.printJSON(all.map(object))
                    } else if all.isEmpty {
                        print("There are no staff yet: trifactord staff grant EMAIL --role read makes one.")
                    } else {
                        for m in all { print("\(m.email)  \(m.role.rawValue)  \(m.userID.raw)  by \(m.grantedBy)") }
                    }
                }
            } catch StaffFailure.noSuchAccount {
                throw ConfigurationParser.Failure(description: "There is no account with the email \(email).")
            } catch StaffFailure.notStaff {
                throw ConfigurationParser.Failure(description: "\(email) is not staff.")
            }
        }
    }

    /// A staff member as `--json` prints them.
    private static func object(_ m: StaffMember) -> [String: Any] {
        [
            "user_id": m.userID.raw, "email": m.email, "role": m.role.rawValue, "granted_by": m.grantedBy,
            "granted_at": WireJSON.format(Date(millis: m.grantedAt)),
        ]
    }
}
