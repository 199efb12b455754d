import API
import Core
import Crypto
import Foundation
import Glibc
import HTTP
import Messaging
import Store

/// `trifactord doctor [--json]`: checks what operators get wrong in a deployment, reading only (nothing is
/// written to the database, the files or the server). Each finding is one sentence with its fix. Exit 0 when
/// every check passed, 1 with warnings only, 2 with an error (or settings that cannot be read): the usual
/// monitoring convention. Run it as the service runs, with the same settings and user (the package's
/// `/etc/trifactor/trifactord.env`, as user `trifactor`), on a host from which the public URL is reached as
/// clients reach it.
enum DoctorCommand {
    static let usage = """
        Usage: trifactord doctor [--json] [OPTIONS]

        Checks the deployment with the same settings as serve, changing nothing: the settings' names; the database
        (its files' modes, pending migrations, its clock on PostgreSQL); the key file (present, private, opening
        the sealed secrets); the TLS certificate (expiry, key, host); the file-descriptor limit against
        --max-connections; the public URL (reached, this deployment, its certificate, forwarded headers trusted
        from the proxy and from nobody else); the email and SMS providers (reached). Each finding is one sentence
        with its fix. Exit 0: all passed; 1: warnings; 2: an error. --json prints {"status", "checks": [...]}.
        """

    enum Status: String, Encodable, Comparable {
        case ok, skipped, warning, error

        var rank: Int {
            switch self {
            case .ok, .skipped: 0
            case .warning: 1
            case .error: 2
            }
        }

        static func < (a: Status, b: Status) -> Bool { a.rank < b.rank }
    }

    struct Finding: Encodable {
        let check: String
        let status: Status
        let detail: String
    }

    struct Report: Encodable {
        let version: String
        let status: Status
        let checks: [Finding]
    }

    /// The address the doctor claims in `X-Forwarded-For` (TEST-NET-1, RFC 5737): the server must never settle on it.
    static let forgedAddress = "192.0.2.77"

    static func run(_ arguments: [String], environment: [String: String]) -> Int32 {
        var rest = arguments
        let json = rest.contains("--json")
        rest.removeAll { $0 == "--json" }
        var findings: [Finding] = []
        let configuration: Configuration
        do {
            configuration = try ConfigurationParser.parse(arguments: rest, environment: environment)
        } catch {
            findings.append(Finding(check: "settings", status: .error, detail: "The settings cannot be read: \(error)"))
            return report(findings, json: json)
        }
        var doctor = Doctor(configuration: configuration, arguments: rest, environment: environment)
        doctor.examine()
        return report(doctor.findings, json: json)
    }

    private static func report(_ findings: [Finding], json: Bool) -> Int32 {
        let status = findings.map(\.status).max() ?? .ok
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let data =
                (try? encoder.encode(Report(version: TrifactorVersion.current, status: status, checks: findings)))
                ?? Data()
            print(String(decoding: data, as: UTF8.self))
        } else {
            for finding in findings {
                print(
                    "\(finding.status.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)) \(finding.check): \(finding.detail)"
                )
            }
            let problems = findings.filter { $0.status >= .warning }.count
            print(
                problems == 0
                    ? "No problem found."
                    : "\(problems) problem\(problems == 1 ? "" : "s") found (\(status == .error ? "errors" : "warnings only"))."
            )
        }
        return Int32(status.rank)
    }
}

/// One run of the checks, in the order an operator fixes things.
struct Doctor {
    let configuration: Configuration
    let arguments: [String]
    let environment: [String: String]
    var findings: [DoctorCommand.Finding] = []
    /// What the server said through the public URL, once proven.
    var echo: DoctorEcho?

    init(configuration: Configuration, arguments: [String], environment: [String: String]) {
        self.configuration = configuration
        self.arguments = arguments
        self.environment = environment
    }

    /// This instance's clock, moved by TRIFACTOR_CLOCK_OFFSET as the server's is.
    var now: Date { Date().addingTimeInterval(configuration.clockOffset) }

    mutating func add(_ check: String, _ status: DoctorCommand.Status, _ detail: String) {
        findings.append(DoctorCommand.Finding(check: check, status: status, detail: detail))
    }

    mutating func examine() {
        settings()
        secretFiles()
        let ring = keyFile()
        let database = self.database()
        if let database {
            defer { database.close() }
            migrations(database)
            sealedSecrets(database, ring: ring)
            fapiClients(database)
            clock(database)
        }
        tls()
        publicURL(ring)
        fileLimit()
        delivery()
    }

}
