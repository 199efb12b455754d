import API
import Core
import Crypto
import Foundation
import Glibc
import HTTP
import Messaging
import Store

/// The doctor's checks on this host: the settings, the files holding secrets, the key file and the database.
extension Doctor {
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
}
