import Foundation
import HTTP

/// The process: its database, where and how it listens, dev mode, TLS, the
/// HTTP limits and threads; the clock offset of fault drills; the proxies
/// whose word on a client is taken; and how long a shutdown waits.
extension Setting {
    static let server: [Setting] = [
        Setting(
            variable: "TRIFACTOR_DATABASE_URL", flag: "--database-url", valueName: "URL",
            help: "Database: sqlite:PATH (embedded) or postgres://USER@HOST:PORT/DB",
            defaultText: "sqlite:data/trifactor.db"
        ) { c, v in
            let scheme = v.lowercased()
            guard scheme.hasPrefix("sqlite:") || scheme.hasPrefix("postgres:") || scheme.hasPrefix("postgresql://")
            else {
                return "The database URL must start with sqlite: or postgres://."
            }
            c.databaseURL = v
            return nil
        },
        int("TRIFACTOR_DATABASE_POOL", "--database-pool", "Database connections per process", "4", 1...64) {
            $0.databasePoolSize = $1
        },
        Setting(
            variable: "TRIFACTOR_MIGRATE_ON_START", flag: "--migrate-on-start", valueName: "auto|always|never",
            help:
                "Pending migrations at start: auto applies them on SQLite (after a backup beside the database) and refuses on PostgreSQL (run trifactord migrate); always applies them; never refuses",
            defaultText: "auto"
        ) { c, v in
            guard let policy = SchemaUpgrade.Policy(rawValue: v.lowercased()) else {
                return "TRIFACTOR_MIGRATE_ON_START must be auto, always or never."
            }
            c.migrateOnStart = policy
            return nil
        },
        Setting(
            variable: "TRIFACTOR_LISTEN", flag: "--listen", valueName: "HOST:PORT",
            help: "Address to listen on (port 0 picks a free one)", defaultText: "127.0.0.1:8080"
        ) { c, v in
            guard let colon = v.lastIndex(of: ":"), let port = Int(v[v.index(after: colon)...]),
                (0...65535).contains(port)
            else {
                return "The listen address must look like 127.0.0.1:8080."
            }
            var host = String(v[..<colon])
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            if host == "localhost" { host = "127.0.0.1" }
            c.http.host = host
            c.http.port = port
            return nil
        },
        Setting(
            variable: "TRIFACTOR_DEV", flag: "--dev", valueName: "0|1",
            help: "Dev mode: messages printed to the log and listed at /dev/outbox", defaultText: "0"
        ) { c, v in
            switch v.lowercased() {
            case "1", "true", "yes", "on": c.dev = true
            case "0", "false", "no", "off", "": c.dev = false
            default: return "TRIFACTOR_DEV must be 0 or 1."
            }
            return nil
        },
        pem("TRIFACTOR_TLS_CERT", "--tls-cert", "PEM certificate chain: serve HTTPS (with --tls-key)") {
            $0.http.tlsCertificatePEM = $1
        },
        pem("TRIFACTOR_TLS_KEY", "--tls-key", "PEM private key for --tls-cert") { $0.http.tlsKeyPEM = $1 },
        int(
            "TRIFACTOR_MAX_BODY_BYTES", "--max-body-bytes", "Largest request body; larger ones get 413", "65536",
            1024...16_777_216
        ) { $0.http.maxBodyBytes = $1 },
        int("TRIFACTOR_MAX_CONNECTIONS", "--max-connections", "Most simultaneous connections", "1024", 16...1_000_000) {
            $0.http.connectionLimit = $1
        },
        int(
            "TRIFACTOR_CONNECTION_MEMORY_KIB", "--connection-memory-kib",
            "Memory per connection in KiB, half of it for a request's head (libmicrohttpd touches all of it once a connection served a request)",
            "\(HTTPServer.connectionMemory / 1024)", 8...256
        ) { $0.http.connectionMemory = $1 * 1024 },
        int(
            "TRIFACTOR_MAX_CONNECTIONS_PER_IP", "--max-connections-per-ip",
            "Most simultaneous connections from one client address (0: no limit)",
            "64", 0...1_000_000
        ) { $0.http.connectionsPerIP = $1 },
        seconds(
            "TRIFACTOR_HEADER_TIMEOUT", "--header-timeout",
            "Seconds to send a request's head, from connecting or the previous answer", "10"
        ) {
            $0.http.headerTimeout = $1
        },
        seconds(
            "TRIFACTOR_BODY_TIMEOUT", "--body-timeout", "Seconds to send a request's body once its head arrived", "30"
        ) { $0.http.bodyTimeout = $1 },
        int(
            "TRIFACTOR_IDLE_TIMEOUT", "--idle-timeout", "Seconds a connection may stay silent, reading or writing",
            "30", 1...3600
        ) {
            $0.http.connectionTimeout = $1
        },
        int("TRIFACTOR_HTTP_THREADS", "--http-threads", "HTTP (epoll) threads", "4", 1...64) {
            $0.http.httpThreads = $1
        },
        int("TRIFACTOR_WORKER_THREADS", "--worker-threads", "Threads for password hashing", "number of cores", 1...64) {
            $0.http.workerThreads = $1
        },
        int("TRIFACTOR_WORKER_QUEUE", "--worker-queue", "Hashing jobs that may wait; more get 503", "64", 1...100_000) {
            $0.http.workerQueueLimit = $1
        },
    ]

    static let clockOffset: [Setting] = [
        Setting(
            variable: "TRIFACTOR_CLOCK_OFFSET", flag: "--clock-offset", valueName: "SECONDS",
            help: "Move this instance's clock, for fault drills of clock skew between instances (never in production)",
            defaultText: "0"
        ) { c, v in
            guard let seconds = Double(v), abs(seconds) <= 3600 else {
                return "TRIFACTOR_CLOCK_OFFSET must be a number of seconds from -3600 to 3600."
            }
            c.clockOffset = seconds
            return nil
        }
    ]

    static let proxies: [Setting] = [
        Setting(
            variable: "TRIFACTOR_TRUSTED_PROXIES", flag: "--trusted-proxies", valueName: "LIST",
            help:
                "Proxies (addresses or CIDR networks) whose X-Forwarded-For and X-Forwarded-User-Agent name the client",
            defaultText: "none"
        ) { c, v in
            guard let proxies = TrustedProxies(parsing: v) else {
                return "TRIFACTOR_TRUSTED_PROXIES must list addresses or networks like 127.0.0.1,10.0.0.0/8,::1."
            }
            c.http.trustedProxies = proxies
            return nil
        },
        Setting(
            variable: "TRIFACTOR_BRANDS", flag: "--brands", valueName: "LIST",
            help:
                "Names a trusted proxy may give its customers' texts, calls, emails and app entries (X-Trifactor-Brand), exactly",
            defaultText: "none"
        ) { c, v in
            let names = v.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard names.allSatisfy({ AuditContext.brand($0) == $0 }) else {
                return
                    "TRIFACTOR_BRANDS must list names of 1 to 18 letters, digits, spaces and &'.- (like Trifactor Bank), separated by commas."
            }
            c.http.brands = Set(names)
            return nil
        },
    ]

    static let shutdown: [Setting] = [
        seconds("TRIFACTOR_DRAIN_TIMEOUT", "--drain-timeout", "Seconds to finish requests in flight on SIGTERM", "30") {
            $0.drainTimeout = $1
        }
    ]

    private static func pem(
        _ variable: String, _ flag: String, _ help: String,
        _ set: @escaping @Sendable (inout Configuration, String) -> Void
    ) -> Setting {
        Setting(variable: variable, flag: flag, valueName: "FILE", help: help, defaultText: "none (plain HTTP)") {
            c, v in
            guard let text = try? String(contentsOfFile: v, encoding: .utf8) else {
                return "\(variable) names a file that cannot be read: \(v)."
            }
            guard text.contains("-----BEGIN ") else { return "\(variable) is not a PEM file: \(v)." }
            set(&c, text)
            return nil
        }
    }
}
