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
private struct Doctor {
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

    // MARK: Settings

    mutating func settings() {
        for sentence in configuration.deprecations { add("settings", .warning, sentence) }
        if configuration.dev {
            add(
                "settings", .error,
                "TRIFACTOR_DEV is on: codes are printed to the log and listed at /dev/outbox. Set TRIFACTOR_DEV=0 on a server people use."
            )
        }
        if configuration.clockOffset != 0 {
            add(
                "settings", .warning,
                "TRIFACTOR_CLOCK_OFFSET moves this instance's clock by \(configuration.clockOffset) s: it is for fault drills. Remove it and keep clocks right with NTP."
            )
        }
        do {
            _ = try CommonPasswords.policy(dictionary: configuration.passwordDictionary)
        } catch {
            add("settings", .error, "\(error) serve stops without it.")
        }
        for network in configuration.http.trustedProxies.unusual {
            let prefix = Int(network.split(separator: "/").last ?? "") ?? 0
            // Fewer than 8 bits (IPv4) or 16 (IPv6) of prefix is a good part of the Internet.
            let broad = prefix < (network.contains(":") ? 16 : 8)
            add(
                "trusted_proxies", broad ? .error : .warning,
                broad
                    ? "TRIFACTOR_TRUSTED_PROXIES trusts \(network), a large part of the Internet\(prefix == 0 ? " (every address)" : ""): anyone there can choose the address that rate limits, lockouts and the audit log see. List only your proxies."
                    : "TRIFACTOR_TRUSTED_PROXIES trusts \(network), outside the private ranges where proxies usually sit: anyone there can choose the client's address. List only your proxies."
            )
        }
        if findings.isEmpty { add("settings", .ok, "The settings are read, with no former names and dev mode off.") }
    }

    /// A setting's text as given (flag over variable), for the settings that name files.
    func given(_ variable: String, _ flag: String) -> String? {
        var value = environment[variable]
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == flag, index + 1 < arguments.count {
                value = arguments[index + 1]
                index += 1
            } else if argument.hasPrefix(flag + "=") {
                value = String(argument.dropFirst(flag.count + 1))
            }
            index += 1
        }
        return value
    }

    /// Files holding secrets: nobody but the service (and root) reads them.
    mutating func secretFiles() {
        var files = [
            ("TRIFACTOR_TLS_KEY", "--tls-key"), ("TRIFACTOR_METRICS_TOKEN_FILE", "--metrics-token-file"),
            ("TRIFACTOR_SMTP_PASSWORD_FILE", "--smtp-password-file"),
            ("TRIFACTOR_OIDC_REGISTRATION_TOKEN_FILE", "--oidc-registration-token-file"),
        ].compactMap { variable, flag in given(variable, flag).map { (path: $0, from: variable) } }
        // The SMS providers' secret files, named in their URLs.
        for account in (given("TRIFACTOR_SMS_PROVIDER", "--sms-provider") ?? "").split(separator: ",") {
            for item in URLComponents(string: account.trimmingCharacters(in: .whitespaces))?.queryItems ?? []
            where item.name.hasSuffix("_file") {
                if let path = item.value { files.append((path, "TRIFACTOR_SMS_PROVIDER's \(item.name)")) }
            }
        }
        for (path, from) in files {
            var info = stat()
            guard stat(path, &info) == 0 else { continue }
            if info.st_mode & 0o004 != 0 {
                add(
                    "files", .error,
                    "\(path) (\(from)) holds a secret that every user of this machine can read: run chmod o-rwx \(path)."
                )
            } else if info.st_mode & 0o040 != 0 && geteuid() != 0 && info.st_gid != getegid() {
                // Run as the service's user: a group that is not its own reads the secret too.
                add(
                    "files", .warning,
                    "\(path) (\(from)) can be read by group \(info.st_gid), which is not this user's: run chmod g-r \(path), or give it the service's group."
                )
            }
        }
        if environment["TRIFACTOR_SMTP_PASSWORD"] != nil || given("", "--smtp-password") != nil {
            add(
                "files", .warning,
                "The SMTP password is given as a value (TRIFACTOR_SMTP_PASSWORD or --smtp-password), where other processes, crash reports and ps can see it: put it in a file named by TRIFACTOR_SMTP_PASSWORD_FILE."
            )
        }
    }

    // MARK: The key file and the database

    mutating func keyFile() -> KeyRing? {
        let path = configuration.keyFile
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == EACCES {
                add(
                    "key_file", .error,
                    "The key file \(path) cannot be reached by this user (permission denied): run the doctor as the service's user (sudo -u trifactor …)."
                )
                return nil
            }
            add(
                "key_file", .warning,
                "There is no key file at \(path): authenticator apps cannot be enrolled, and the public URL cannot be proven. Restore it from its backup; make a new one only for a database that never had one (a new key never opens secrets sealed by the old)."
            )
            return nil
        }
        if info.st_mode & 0o077 != 0 {
            add(
                "key_file", .error,
                "The key file \(path) can be read by group or others (mode \(String(info.st_mode & 0o777, radix: 8))); trifactord refuses it: run chmod 600 \(path)."
            )
            return nil
        }
        if info.st_uid != geteuid() {
            add(
                "key_file", .warning,
                "The key file \(path) belongs to user \(info.st_uid), not to the user running this check (\(geteuid())): run the doctor as the service's user, or chown it to that user."
            )
        }
        do {
            let ring = try KeyRing(path: path)
            add("key_file", .ok, "The key file \(path) is private and holds \(ring.entries.count) key(s).")
            return ring
        } catch {
            add("key_file", .error, "\(error)")
            return nil
        }
    }

    mutating func database() -> (any Database)? {
        let url = configuration.databaseURL
        if let path = SQLiteBackup.path(of: url) {
            var info = stat()
            guard stat(path, &info) == 0 else {
                if errno == EACCES {
                    add(
                        "database", .error,
                        "The database \(path) cannot be reached by this user (permission denied): run the doctor as the service's user (sudo -u trifactor …)."
                    )
                    return nil
                }
                add(
                    "database", .warning,
                    "There is no database at \(path) yet: serve creates it. If one should be there, check TRIFACTOR_DATABASE_URL and the working directory."
                )
                return nil
            }
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
            var folder = stat()
            if stat(directory, &folder) == 0, folder.st_mode & 0o002 != 0 {
                add(
                    "database", .error,
                    "The folder \(directory) holding the database can be written by every user: run chmod 700 \(directory)."
                )
            }
            let exposed = [path, path + "-wal", path + "-shm"].filter { file in
                var info = stat()
                return stat(file, &info) == 0 && info.st_mode & 0o077 != 0
            }
            if !exposed.isEmpty {
                add(
                    "database", .error,
                    "\(exposed.joined(separator: ", ")) can be read by group or others (password hashes, phone numbers); trifactord refuses it: run chmod 600 \(exposed.joined(separator: " "))."
                )
                return nil
            }
            copiesBeforeMigrations(of: path, in: directory)
            var space = statvfs()
            if statvfs(directory, &space) == 0 {
                let free = Double(space.f_bavail) * Double(space.f_frsize)
                let total = Double(space.f_blocks) * Double(space.f_frsize)
                if free < 1_073_741_824 || (total > 0 && free / total < 0.05) {
                    add(
                        "database", .warning,
                        String(
                            format:
                                "Only %.1f GiB are free beside the database in %@: a migration's backup copies the whole file, and a full disk stops sign-ins. Free some space.",
                            free / 1_073_741_824, directory))
                }
            }
        }
        do {
            // Read-only: a SQLite file is opened for reading alone (no journal mode set, no checkpoint), and only
            // SELECTs run on either database.
            let database = try Store.openDatabase(url: url, poolSize: 1, readOnly: true)
            add(
                "database", .ok,
                database.dialect == .sqlite
                    ? "The SQLite database \(SQLiteBackup.path(of: url) ?? url) opens and its files are private."
                    : "PostgreSQL answers.")
            return database
        } catch {
            add(
                "database", .error,
                "The database cannot be opened: \(error). Check TRIFACTOR_DATABASE_URL and that the server is up.")
            return nil
        }
    }

    /// The copies serve made before migrating (`DB.before-vN.TIME`) are never deleted by trifactord: name them
    /// once the oldest is a month old, with the space they take.
    mutating func copiesBeforeMigrations(of path: String, in directory: String) {
        let prefix = URL(fileURLWithPath: path).lastPathComponent + ".before-v"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        var oldest = Date()
        var bytes = 0.0
        var count = 0
        for name in names where name.hasPrefix(prefix) {
            var info = stat()
            guard stat(directory + "/" + name, &info) == 0 else { continue }
            count += 1
            bytes += Double(info.st_size)
            oldest = min(oldest, Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec)))
        }
        guard count > 0, oldest.timeIntervalSinceNow < -30 * 86_400 else { return }
        add(
            "database", .warning,
            String(
                format:
                    "%d cop%@ of the database made before migrations (%.1f MiB) lie beside it in %@, the oldest from %@: delete those you no longer need to go back to.",
                count, count == 1 ? "y" : "ies", bytes / 1_048_576, directory,
                oldest.formatted(.iso8601.year().month().day())))
    }

    mutating func migrations(_ database: any Database) {
        do {
            let pending = try SchemaUpgrade.pending(database)
            if pending.isEmpty {
                add("migrations", .ok, "The database's schema is this build's.")
            } else if SchemaUpgrade.migratesAtStart(configuration.migrateOnStart, database.dialect) {
                add(
                    "migrations", .warning,
                    database.dialect == .sqlite
                        ? "Migrations \(SchemaUpgrade.describe(pending)) are pending: serve copies the database beside itself, then applies them (or run trifactord migrate now)."
                        : "Migrations \(SchemaUpgrade.describe(pending)) are pending, and the first instance to start applies them (TRIFACTOR_MIGRATE_ON_START=always): back the database up and stop the old build's instances first."
                )
            } else {
                add(
                    "migrations", .error,
                    "Migrations \(SchemaUpgrade.describe(pending)) are pending and serve will refuse the database: stop the old instances, back it up, run trifactord migrate."
                )
            }
        } catch {
            add("migrations", .error, "\(error)")
        }
    }

    /// Under TRIFACTOR_OIDC_FAPI2, a client that cannot be a FAPI 2.0 client (a secret, or none) is refused at every
    /// endpoint: name them.
    mutating func fapiClients(_ database: any Database) {
        guard configuration.oidc, configuration.fapi2 else { return }
        let stranded = (try? database.read { try ClientRepository.all(on: $0) })?.filter {
            $0.authMethod != .privateKeyJWT
        }
        guard let stranded, !stranded.isEmpty else { return }
        let names = stranded.prefix(10).map(\.id).joined(separator: ", ") + (stranded.count > 10 ? ", …" : "")
        add(
            "clients", .warning,
            "TRIFACTOR_OIDC_FAPI2 holds every client to FAPI 2.0, and \(stranded.count) client(s) cannot sign in under it (no private_key_jwt): \(names). Re-register them with --auth-method private_key_jwt, or turn the switch off."
        )
    }

    mutating func sealedSecrets(_ database: any Database, ring: KeyRing?) {
        guard ring != nil || !FileManager.default.fileExists(atPath: configuration.keyFile) else { return }
        do {
            try KeyFile.checkOpens(ring, path: configuration.keyFile, database: database)
        } catch {
            add("key_file", .error, "\(error)")
        }
    }

    /// PostgreSQL's clock against this instance's (moved by TRIFACTOR_CLOCK_OFFSET): codes, sessions and tokens
    /// are timed by both.
    mutating func clock(_ database: any Database) {
        guard database.dialect == .postgres else { return }
        do {
            let before = now
            let row = try database.read {
                try $0.queryOne("SELECT EXTRACT(EPOCH FROM clock_timestamp())::float8 AS t")
            }
            let after = now
            guard let theirs = try row?.double("t") else { return }
            let skew = (before.timeIntervalSince1970 + after.timeIntervalSince1970) / 2 - theirs
            let text = String(format: "%+.1f s", skew)
            if abs(skew) > 30 {
                add(
                    "clock", .error,
                    "This instance's clock is \(text) from PostgreSQL's: one-time codes and expiries go wrong. Run NTP (systemd-timesyncd or chrony) on both."
                )
            } else if abs(skew) > 2 {
                add("clock", .warning, "This instance's clock is \(text) from PostgreSQL's: run NTP on both.")
            } else {
                add("clock", .ok, "This instance's clock is within 2 s of PostgreSQL's (\(text)).")
            }
        } catch {
            add("clock", .warning, "PostgreSQL's clock could not be read: \(error).")
        }
    }

    // MARK: TLS, the public URL, limits, delivery

    mutating func tls() {
        guard let pem = configuration.http.tlsCertificatePEM else { return }
        let host = configuration.publicURL?.host
        guard let certificate = CertificateCheck(pem: pem, keyPEM: configuration.http.tlsKeyPEM, host: host) else {
            add(
                "tls", .error,
                "TRIFACTOR_TLS_CERT holds no certificate OpenSSL can read: give the PEM chain, the server's certificate first."
            )
            return
        }
        expiry(certificate.expires, of: "The certificate in TRIFACTOR_TLS_CERT", check: "tls")
        if certificate.keyMatches == false {
            add(
                "tls", .error,
                "TRIFACTOR_TLS_KEY is not (or does not hold) the key of TRIFACTOR_TLS_CERT's certificate: give the pair that belongs together."
            )
        }
        if let host, certificate.coversHost == false {
            add(
                "tls", .warning,
                "The certificate in TRIFACTOR_TLS_CERT does not name \(host), the public URL's host: clients that reach trifactord directly will refuse it (a proxy that terminates TLS in front is fine). Issue one for \(host) if they do."
            )
        }
    }

    mutating func expiry(_ expires: Date, of what: String, check: String) {
        let days = expires.timeIntervalSinceNow / 86_400
        let date = expires.formatted(.iso8601.year().month().day())
        if days < 0 {
            add(check, .error, "\(what) expired on \(date): renew it.")
        } else if days < 14 {
            add(check, .warning, "\(what) expires in \(Int(days)) day(s), on \(date): renew it now.")
        } else {
            add(check, .ok, "\(what) is valid until \(date).")
        }
    }

    mutating func publicURL(_ ring: KeyRing?) {
        guard let base = configuration.publicURL else {
            add(
                "public_url", .skipped,
                "TRIFACTOR_PUBLIC_URL is not set: the OpenID Provider, emails' links and delivery receipts need it.")
            return
        }
        let root = base.absoluteString.hasSuffix("/") ? String(base.absoluteString.dropLast()) : base.absoluteString
        guard let ring, let ringKey = ring.entries.last?.key else {
            // Without the key only reachability can be checked.
            do throws(OutboundCheck.Failure) {
                let answer = try OutboundCheck.get(URL(string: root + "/ready")!)
                add(
                    "public_url", answer.status == 200 ? .warning : .error,
                    "\(root)/ready answers \(answer.status), but without the key file the doctor cannot tell whether this deployment answers there."
                )
            } catch {
                unreachable(root, error)
            }
            return
        }
        let key = DoctorProof.key(ringKey)
        let at = Int(now.timeIntervalSince1970)
        let nonce = Hex.encode(SecureRandom.bytes(16))
        let header =
            "\(DoctorProof.header): at=\(at);nonce=\(nonce);proof=\(DoctorProof.request(key: key, at: at, nonce: nonce))"
        let answer: OutboundCheck.Answer
        do throws(OutboundCheck.Failure) {
            answer = try OutboundCheck.get(
                URL(string: root + DoctorRoute.path)!,
                headers: [header, "X-Forwarded-For: \(DoctorCommand.forgedAddress)"])
        } catch {
            unreachable(root, error)
            return
        }
        if let expires = answer.certificateExpires {
            expiry(expires, of: "The certificate at \(root)", check: "public_tls")
        }
        if (300..<400).contains(answer.status) {
            add(
                "public_url", .error,
                "\(root) redirects (HTTP \(answer.status)) to \(answer.headers["location"] ?? "another address"): set TRIFACTOR_PUBLIC_URL to the address clients end up at, without a redirect."
            )
            return
        }
        guard answer.status == 200, let proof = answer.headers[DoctorProof.answerHeader.lowercased()],
            ConstantTime.equals(proof, DoctorProof.answer(key: key, nonce: nonce, body: Array(answer.body))),
            let echo = try? JSONDecoder().decode(DoctorEcho.self, from: answer.body)
        else {
            // A server more than the proof's window away in time refuses it too: say so rather than blame the URL.
            if let date = answer.headers["date"].flatMap(Self.httpDate),
                abs(date.timeIntervalSince(now)) > DoctorProof.window - 5
            {
                add(
                    "clock", .error,
                    String(
                        format:
                            "The server at %@ answers with a clock %+.0f s from this instance's: too far apart for the doctor's proof, and for codes and expiries. Run NTP on both.",
                        root, date.timeIntervalSince(now)))
                return
            }
            add(
                "public_url", .error,
                "What answers at \(root) (HTTP \(answer.status)) is not this deployment: it did not prove the key file. Point TRIFACTOR_PUBLIC_URL and the proxy at this trifactord, with the same key file (trifactord 0.11.0 or later)."
            )
            return
        }
        self.echo = echo
        add("public_url", .ok, "\(root) reaches this deployment (trifactord \(echo.version)).")
        if echo.version != TrifactorVersion.current {
            add(
                "public_url", .warning,
                "The server at \(root) runs trifactord \(echo.version), this doctor is \(TrifactorVersion.current): restart it after an upgrade."
            )
        }
        proxies(echo, local: answer.localAddress)
        let middle = answer.sent.addingTimeInterval(answer.received.timeIntervalSince(answer.sent) / 2)
        let skew = middle.timeIntervalSince1970 + configuration.clockOffset - echo.time
        if abs(skew) > 5 {
            add(
                "clock", .warning,
                String(format: "This instance's clock is %+.0f s from the server's at %@: run NTP on both.", skew, root)
            )
        }
    }

    mutating func unreachable(_ root: String, _ error: OutboundCheck.Failure) {
        guard error.untrusted else {
            add(
                "public_url", .error,
                "\(root) cannot be reached from here: \(error.reason). Check DNS, the proxy and the firewall.")
            return
        }
        // The certificate failed verification: read it without verifying, to say why.
        let expires = try? OutboundCheck.get(URL(string: root + "/ready")!, verify: false).certificateExpires
        if let expires, expires < Date() {
            expiry(expires, of: "The certificate at \(root)", check: "public_tls")
        } else {
            add(
                "public_tls", .error,
                "The certificate at \(root) is not trusted (\(error.reason)): it names another host, or comes from an authority clients do not know. Install one for this host from a public authority."
            )
        }
    }

    static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }

    /// "Forwarded headers from the proxy trusted, and from nobody else". The doctor's request claims
    /// `X-Forwarded-For: 192.0.2.77`; a proxy in front appends (or sets) the address it saw. From what came
    /// (the peer, whether it is trusted, the header as received, the address settled on) and this end's
    /// address on the connection:
    mutating func proxies(_ echo: DoctorEcho, local: String?) {
        let forged = DoctorCommand.forgedAddress
        let trusted = configuration.http.trustedProxies
        let hops = (echo.forwardedFor ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let direct = local != nil && echo.peer == local
        if echo.client == forged {
            // The doctor's own address trusted (it runs on the proxy's host, or in a trusted network): the server
            // rightly walked past it. Clients outside those networks cannot do the same.
            let afterForged = hops.firstIndex(of: forged).map { hops.index(after: $0) }
            let seenAs = afterForged.flatMap { $0 < hops.endIndex ? hops[$0] : nil } ?? (direct ? echo.peer : nil)
            if let seenAs, trusted.trusts(seenAs) {
                add(
                    "proxy", .skipped,
                    "This host (\(seenAs)) is itself a trusted proxy, so the forwarded headers cannot be checked from here: run the doctor from a host outside TRIFACTOR_TRUSTED_PROXIES."
                )
                return
            }
            add(
                "proxy", .error,
                "A request claiming X-Forwarded-For: \(forged) was taken to come from \(forged): anyone can choose the address that rate limits, lockouts and the audit log see. Have the proxy at \(echo.peer) set X-Forwarded-For itself (nginx: proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for), and trust only your proxies in TRIFACTOR_TRUSTED_PROXIES."
            )
            return
        }
        if echo.forwardedFor == nil {
            // Something between dropped the header without setting its own: every user is that something.
            add(
                "proxy", .error,
                "The proxy at \(echo.peer) sends no X-Forwarded-For: every user appears as \(echo.peer) in rate limits, lockouts and the audit log. Have it send one (nginx: proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for)\(echo.peerTrusted ? "" : " and add \(echo.peer) to TRIFACTOR_TRUSTED_PROXIES")."
            )
            return
        }
        let untouched = hops == [forged]
        if untouched && direct {
            add(
                "proxy", .ok,
                "No proxy stands between this host and trifactord, and a client's X-Forwarded-For is ignored.")
        } else if untouched {
            // The peer is not this host, yet the header came as sent: a relay (a proxy, a load balancer, NAT)
            // that adds nothing; every user behind it shares its address.
            add(
                "proxy", .error,
                "Requests reach trifactord from \(echo.peer), not from this host (\(local ?? "?")), and the relay there adds no address to X-Forwarded-For: every user shares \(echo.peer) in rate limits, lockouts and the audit log. Have it append the client's address (nginx: $proxy_add_x_forwarded_for) and add \(echo.peer) to TRIFACTOR_TRUSTED_PROXIES."
            )
        } else if !echo.peerTrusted {
            add(
                "proxy", .error,
                "A proxy at \(echo.peer) forwards requests to trifactord but is not in TRIFACTOR_TRUSTED_PROXIES: every user shares its address in rate limits, lockouts and the audit log. Add \(echo.peer) to TRIFACTOR_TRUSTED_PROXIES."
            )
        } else {
            add(
                "proxy", .ok,
                "Requests through the proxy at \(echo.peer) (trusted) are read as from the address it names (\(echo.client)), never one a client claims."
            )
        }
    }

    mutating func fileLimit() {
        let needed = configuration.http.connectionLimit + configuration.databasePoolSize + 64
        if let echo {
            if echo.fileLimit < echo.connectionLimit + configuration.databasePoolSize + 64 {
                add(
                    "file_limit", .error,
                    "The running server may open \(echo.fileLimit) files but accepts \(echo.connectionLimit) connections: raise LimitNOFILE= in its unit (or ulimit -n), or lower TRIFACTOR_MAX_CONNECTIONS."
                )
            } else {
                add(
                    "file_limit", .ok,
                    "The running server's file limit (\(echo.fileLimit)) covers its \(echo.connectionLimit) connections."
                )
            }
            return
        }
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        if limit.rlim_max < needed {
            add(
                "file_limit", .warning,
                "This shell may open at most \(limit.rlim_max) files, but TRIFACTOR_MAX_CONNECTIONS=\(configuration.http.connectionLimit) needs \(needed): if the server runs with this limit, raise it (LimitNOFILE= in the unit, ulimit -Hn) or lower TRIFACTOR_MAX_CONNECTIONS. The running server's own limit is checked through the public URL."
            )
        } else {
            add(
                "file_limit", .ok,
                "The file limit here (\(limit.rlim_max)) covers \(configuration.http.connectionLimit) connections (the running server's own limit is checked through the public URL)."
            )
        }
    }

    mutating func delivery() {
        if let smtp = configuration.smtp {
            if let failure = OutboundCheck.connect(smtp.url, requireTLS: smtp.requireTLS, caFile: smtp.caFile) {
                add(
                    "delivery", .error,
                    "The SMTP server \(smtp.url.host ?? "") cannot be reached from here: \(failure). Emails wait in the outbox until it can; check TRIFACTOR_SMTP_URL, its TLS and the firewall."
                )
            } else {
                add(
                    "delivery", .ok,
                    "The SMTP server \(smtp.url.host ?? "") is reached\(smtp.requireTLS ? " over TLS" : "") (the doctor does not sign in)."
                )
            }
        }
        for account in configuration.providers {
            let hosts =
                account.apiBase.map { [$0] }
                ?? (account.kind == .vonage
                    ? [URL(string: "https://rest.nexmo.com")!, URL(string: "https://api.nexmo.com")!]
                    : [URL(string: "https://api.twilio.com")!])
            for url in hosts {
                if let failure = OutboundCheck.connect(url) {
                    add(
                        "delivery", .error,
                        "\(account.kind.rawValue) at \(url.host ?? "") cannot be reached from here: \(failure). Texts fail over to the next provider, or wait; check the firewall and DNS."
                    )
                } else {
                    add("delivery", .ok, "\(account.kind.rawValue) at \(url.host ?? "") is reached.")
                }
            }
        }
        if configuration.smtp == nil && configuration.providers.isEmpty && !configuration.dev {
            add(
                "delivery", .warning,
                "No email server and no SMS provider are set: password-reset emails and phone codes cannot be sent. Set TRIFACTOR_SMTP_URL and TRIFACTOR_SMS_PROVIDER."
            )
        }
    }
}
