import Core
import Foundation
import HTTP
import Messaging

/// One configurable value: its environment variable, its flag, the help text,
/// and how to apply a textual value. The single list below drives parsing and
/// both `--help` texts, so they cannot drift apart.
struct Setting: Sendable {
    let variable: String
    let flag: String
    let valueName: String
    let help: String
    let defaultText: String
    /// Applies the value, or returns the sentence saying why it is invalid.
    let apply: @Sendable (inout Configuration, String) -> String?

    static let all: [Setting] = general + delivery

    static let general: [Setting] = [
        Setting(variable: "TRIFACTOR_DATABASE_URL", flag: "--database-url", valueName: "URL",
                help: "Database: sqlite:PATH (embedded) or postgres://USER@HOST:PORT/DB", defaultText: "sqlite:data/trifactor.db") { c, v in
            let scheme = v.lowercased()
            guard scheme.hasPrefix("sqlite:") || scheme.hasPrefix("postgres:") || scheme.hasPrefix("postgresql://") else {
                return "The database URL must start with sqlite: or postgres://."
            }
            c.databaseURL = v
            return nil
        },
        int("TRIFACTOR_DATABASE_POOL", "--database-pool", "Database connections per process", "4", 1...64) { $0.databasePoolSize = $1 },
        Setting(variable: "TRIFACTOR_LISTEN", flag: "--listen", valueName: "HOST:PORT",
                help: "Address to listen on (port 0 picks a free one)", defaultText: "127.0.0.1:8080") { c, v in
            guard let colon = v.lastIndex(of: ":"), let port = Int(v[v.index(after: colon)...]), (0...65535).contains(port) else {
                return "The listen address must look like 127.0.0.1:8080."
            }
            var host = String(v[..<colon])
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            if host == "localhost" { host = "127.0.0.1" }
            c.http.host = host
            c.http.port = port
            return nil
        },
        Setting(variable: "TRIFACTOR_DEV", flag: "--dev", valueName: "0|1",
                help: "Dev mode: messages printed to the log and listed at /dev/outbox", defaultText: "0") { c, v in
            switch v.lowercased() {
            case "1", "true", "yes", "on": c.dev = true
            case "0", "false", "no", "off", "": c.dev = false
            default: return "TRIFACTOR_DEV must be 0 or 1."
            }
            return nil
        },
        pem("TRIFACTOR_TLS_CERT", "--tls-cert", "PEM certificate chain: serve HTTPS (with --tls-key)") { $0.http.tlsCertificatePEM = $1 },
        pem("TRIFACTOR_TLS_KEY", "--tls-key", "PEM private key for --tls-cert") { $0.http.tlsKeyPEM = $1 },
        int("TRIFACTOR_MAX_BODY_BYTES", "--max-body-bytes", "Largest request body; larger ones get 413", "65536", 1024...16_777_216) { $0.http.maxBodyBytes = $1 },
        int("TRIFACTOR_MAX_CONNECTIONS", "--max-connections", "Most simultaneous connections", "1024", 16...1_000_000) { $0.http.connectionLimit = $1 },
        int("TRIFACTOR_CONNECTION_MEMORY_KIB", "--connection-memory-kib",
            "Memory per connection in KiB, half of it for a request's head (libmicrohttpd touches all of it once a connection served a request)",
            "\(HTTPServer.connectionMemory / 1024)", 8...256) { $0.http.connectionMemory = $1 * 1024 },
        int("TRIFACTOR_MAX_CONNECTIONS_PER_IP", "--max-connections-per-ip", "Most simultaneous connections from one client address (0: no limit)",
            "64", 0...1_000_000) { $0.http.connectionsPerIP = $1 },
        seconds("TRIFACTOR_HEADER_TIMEOUT", "--header-timeout", "Seconds to send a request's head, from connecting or the previous answer", "10") {
            $0.http.headerTimeout = $1
        },
        seconds("TRIFACTOR_BODY_TIMEOUT", "--body-timeout", "Seconds to send a request's body once its head arrived", "30") { $0.http.bodyTimeout = $1 },
        int("TRIFACTOR_IDLE_TIMEOUT", "--idle-timeout", "Seconds a connection may stay silent, reading or writing", "30", 1...3600) {
            $0.http.connectionTimeout = $1
        },
        int("TRIFACTOR_HTTP_THREADS", "--http-threads", "HTTP (epoll) threads", "4", 1...64) { $0.http.httpThreads = $1 },
        int("TRIFACTOR_WORKER_THREADS", "--worker-threads", "Threads for password hashing", "number of cores", 1...64) { $0.http.workerThreads = $1 },
        int("TRIFACTOR_WORKER_QUEUE", "--worker-queue", "Hashing jobs that may wait; more get 503", "64", 1...100_000) { $0.http.workerQueueLimit = $1 },
        int("TRIFACTOR_ARGON2_OPSLIMIT", "--argon2-opslimit", "Argon2id passes (t)", "2", 1...32) { $0.argon2OpsLimit = UInt64($1) },
        int("TRIFACTOR_ARGON2_MEMORY_KIB", "--argon2-memory-kib", "Argon2id memory in KiB (m)", "19456", 8...4_194_304) { $0.argon2MemoryKiB = $1 },
        seconds("TRIFACTOR_SESSION_IDLE_TIMEOUT", "--session-idle-timeout", "Seconds a session may sit unused", "1800") { $0.sessions.idleTimeout = $1 },
        seconds("TRIFACTOR_SESSION_LIFETIME", "--session-lifetime", "Seconds a session lives at most", "43200") { $0.sessions.absoluteLifetime = $1 },
        seconds("TRIFACTOR_SESSION_AAL2_IDLE_TIMEOUT", "--session-aal2-idle-timeout", "Seconds an AAL2 session may sit unused", "3600") { $0.sessionsAAL2.idleTimeout = $1 },
        seconds("TRIFACTOR_SESSION_AAL2_LIFETIME", "--session-aal2-lifetime", "Seconds an AAL2 session lives at most", "86400") { $0.sessionsAAL2.absoluteLifetime = $1 },
        int("TRIFACTOR_MAX_SESSIONS_PER_USER", "--max-sessions-per-user", "Live sessions a user may hold; a new sign-in beyond it ends the oldest",
            "50", 1...10_000) { $0.maxSessionsPerUser = $1 },
        seconds("TRIFACTOR_REAUTH_WINDOW", "--reauth-window", "Seconds a proof stays fresh for enrolling or removing factors", "300") { $0.reauthenticationWindow = $1 },
        Setting(variable: "TRIFACTOR_KEY_FILE", flag: "--key-file", valueName: "FILE",
                help: "Key ring sealing TOTP secrets (ID CREATED BASE64 per line, or one base64 key); dev mode creates it", defaultText: "data/trifactor.key") { c, v in
            guard !v.isEmpty else { return "TRIFACTOR_KEY_FILE must name a file." }
            c.keyFile = v
            return nil
        },
        Setting(variable: "TRIFACTOR_PASSWORD_DICTIONARY", flag: "--password-dictionary", valueName: "PATH",
                help: "cracklib's packed dictionary (without .pwd) that new passwords are checked against; Debian's cracklib-runtime builds it",
                defaultText: "/var/cache/cracklib/cracklib_dict") { c, v in
            guard !v.isEmpty else { return "TRIFACTOR_PASSWORD_DICTIONARY must name a dictionary." }
            c.passwordDictionary = v
            return nil
        },
        seconds("TRIFACTOR_KEY_RETIRE_AFTER", "--key-retire-after", "Seconds a rotated key must have sealed before older keys, once unused, are retired", "60") {
            $0.keyRetireAfter = $1
        },
        Setting(variable: "TRIFACTOR_RP_ID", flag: "--rp-id", valueName: "DOMAIN",
                help: "WebAuthn relying-party id (the site's domain)", defaultText: "localhost") { c, v in
            guard !v.isEmpty, v.count <= 253, !v.contains("/"), !v.contains(":") else { return "TRIFACTOR_RP_ID must be a domain such as bank.example." }
            c.rpID = v.lowercased()
            return nil
        },
        Setting(variable: "TRIFACTOR_RP_NAME", flag: "--rp-name", valueName: "NAME",
                help: "WebAuthn relying-party name shown by browsers", defaultText: "Trifactor") { c, v in
            guard (1...64).contains(v.count) else { return "TRIFACTOR_RP_NAME must be 1 to 64 characters." }
            c.rpName = v
            return nil
        },
        Setting(variable: "TRIFACTOR_VERIFY_COUNTRIES_ALLOW", flag: "--verify-countries-allow", valueName: "LIST",
                help: "Only these country calling codes receive codes (44,49,33)", defaultText: "all") { c, v in
            guard let codes = Self.callingCodes(v) else { return "TRIFACTOR_VERIFY_COUNTRIES_ALLOW must list country calling codes like 44,49,33." }
            c.verify.allowedCountries = codes
            return nil
        },
        Setting(variable: "TRIFACTOR_VERIFY_COUNTRIES_DENY", flag: "--verify-countries-deny", valueName: "LIST",
                help: "Country calling codes that never receive codes", defaultText: "none") { c, v in
            guard let codes = Self.callingCodes(v) else { return "TRIFACTOR_VERIFY_COUNTRIES_DENY must list country calling codes like 7,234." }
            c.verify.deniedCountries = codes
            return nil
        },
        budget("TRIFACTOR_VERIFY_BUDGET_PREFIX", "--verify-budget-prefix",
               "Phone verifications per number prefix (country code and 6 national digits) per hour and per day", "20/h,100/d", \.prefix),
        budget("TRIFACTOR_VERIFY_BUDGET_COUNTRY", "--verify-budget-country", "Phone verifications per country per hour and per day",
               "1000/h,10000/d", \.country),
        budget("TRIFACTOR_VERIFY_BUDGET_TOTAL", "--verify-budget-total", "Phone verifications in total per hour and per day",
               "5000/h,50000/d", \.total),
        Setting(variable: "TRIFACTOR_VERIFY_CONVERSION", flag: "--verify-conversion", valueName: "RATE,VOLUME,HOURS",
                help: "Stop codes to a country that completes fewer than RATE of at least VOLUME verifications over HOURS", defaultText: "0.2,200,24") { c, v in
            let parts = v.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 3, let rate = Double(parts[0]), (0...1).contains(rate), let volume = Int(parts[1]), volume >= 1,
                  let hours = Int(parts[2]), (1...168).contains(hours) else {
                return "TRIFACTOR_VERIFY_CONVERSION must be RATE,VOLUME,HOURS like 0.2,200,24 (rate 0 to 1, hours 1 to 168)."
            }
            c.verify.conversion = .init(minimumRate: rate, minimumVolume: volume, windowHours: hours)
            return nil
        },
        Setting(variable: "TRIFACTOR_VERIFY_CONVERSION_ACTION", flag: "--verify-conversion-action", valueName: "refuse|hold",
                help: "What the conversion guard does with new codes to such a country: refuse them (429), or hold their messages for review",
                defaultText: "refuse") { c, v in
            guard ["refuse", "hold"].contains(v) else { return "TRIFACTOR_VERIFY_CONVERSION_ACTION must be refuse or hold." }
            c.verify.conversion.holdForReview = v == "hold"
            return nil
        },
        Setting(variable: "TRIFACTOR_DEVICE_APPROVAL_KEY", flag: "--device-approval-key", valueName: "optional|required|biometric",
                help: "What a new device must bring: an approval key released by the user's check (required), one released by biometrics only (biometric), or either or none (optional)",
                defaultText: "optional") { c, v in
            guard let policy = DeviceApprovalKeys(rawValue: v) else { return "TRIFACTOR_DEVICE_APPROVAL_KEY must be optional, required or biometric." }
            c.deviceApprovalKeys = policy
            return nil
        },
        Setting(variable: "TRIFACTOR_CLOCK_OFFSET", flag: "--clock-offset", valueName: "SECONDS",
                help: "Move this instance's clock, for fault drills of clock skew between instances (never in production)", defaultText: "0") { c, v in
            guard let seconds = Double(v), abs(seconds) <= 3600 else { return "TRIFACTOR_CLOCK_OFFSET must be a number of seconds from -3600 to 3600." }
            c.clockOffset = seconds
            return nil
        },
        Setting(variable: "TRIFACTOR_TRUSTED_PROXIES", flag: "--trusted-proxies", valueName: "LIST",
                help: "Proxies (addresses or CIDR networks) whose X-Forwarded-For and X-Forwarded-User-Agent name the client", defaultText: "none") { c, v in
            guard let proxies = TrustedProxies(parsing: v) else {
                return "TRIFACTOR_TRUSTED_PROXIES must list addresses or networks like 127.0.0.1,10.0.0.0/8,::1."
            }
            c.http.trustedProxies = proxies
            return nil
        },
        Setting(variable: "TRIFACTOR_BRANDS", flag: "--brands", valueName: "LIST",
                help: "Names a trusted proxy may give its customers' texts, calls, emails and app entries (X-Trifactor-Brand), exactly", defaultText: "none") { c, v in
            let names = v.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard names.allSatisfy({ AuditContext.brand($0) == $0 }) else {
                return "TRIFACTOR_BRANDS must list names of 1 to 18 letters, digits, spaces and &'.- (like Trifactor Bank), separated by commas."
            }
            c.http.brands = Set(names)
            return nil
        },
        Setting(variable: "TRIFACTOR_ORIGINS", flag: "--origins", valueName: "LIST",
                help: "Web origins allowed for passkeys, exact (https://bank.example,...)", defaultText: "none (dev: http://localhost:*)") { c, v in
            let list = v.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard list.allSatisfy({ ($0.hasPrefix("https://") || $0.hasPrefix("http://")) && !$0.hasSuffix("/") }) else {
                return "TRIFACTOR_ORIGINS must list origins like https://bank.example, without a trailing slash."
            }
            c.origins = Set(list)
            return nil
        },
        Setting(variable: "TRIFACTOR_TOTP_ISSUER", flag: "--totp-issuer", valueName: "NAME",
                help: "Issuer shown in authenticator apps and named in phone codes", defaultText: "Trifactor") { c, v in
            guard (1...40).contains(v.count), !v.contains(":") else { return "TRIFACTOR_TOTP_ISSUER must be 1 to 40 characters without a colon." }
            c.totpIssuer = v
            return nil
        },
        int("TRIFACTOR_LOCKOUT_FREE_ATTEMPTS", "--lockout-free-attempts", "Consecutive failed sign-ins at which lockouts start", "5", 1...1000) { $0.lockout.freeAttempts = $1 },
        seconds("TRIFACTOR_LOCKOUT_BASE", "--lockout-base", "First lockout in seconds, doubling per failure", "5") { $0.lockout.baseDelay = $1 },
        seconds("TRIFACTOR_LOCKOUT_MAX", "--lockout-max", "Longest lockout in seconds", "900") { $0.lockout.maximumDelay = $1 },
        rate("TRIFACTOR_SIGNIN_IP_BURST", "--signin-ip-burst", "Sign-in attempts per client IP in a burst", "30") { $0.signInPerIPBurst = $1 },
        rate("TRIFACTOR_SIGNIN_IP_RATE", "--signin-ip-rate", "Sign-in attempts per client IP per second after the burst", "0.5") { $0.signInPerIPRate = $1 },
        rate("TRIFACTOR_SIGNUP_IP_BURST", "--signup-ip-burst", "Sign-ups per client IP in a burst", "10") { $0.signUpPerIPBurst = $1 },
        rate("TRIFACTOR_SIGNUP_IP_RATE", "--signup-ip-rate", "Sign-ups per client IP per second after the burst", "0.1") { $0.signUpPerIPRate = $1 },
        rate("TRIFACTOR_RESEND_BURST", "--resend-burst", "Verification resends per email in a burst", "3") { $0.resendPerEmailBurst = $1 },
        rate("TRIFACTOR_RESEND_RATE", "--resend-rate", "Verification resends per email per second after the burst", "0.00333") { $0.resendPerEmailRate = $1 },
        rate("TRIFACTOR_VERIFY_NUMBER_BURST", "--verify-number-burst", "Phone verifications per number in a burst", "5") { $0.verify.perNumberBurst = $1 },
        rate("TRIFACTOR_VERIFY_NUMBER_RATE", "--verify-number-rate", "Phone verifications per number per second after the burst", "0.00833") { $0.verify.perNumberRate = $1 },
        rate("TRIFACTOR_VERIFY_KEY_BURST", "--verify-key-burst", "Phone verifications per API key in a burst", "100") { $0.verify.perKeyBurst = $1 },
        rate("TRIFACTOR_VERIFY_KEY_RATE", "--verify-key-rate", "Phone verifications per API key per second after the burst", "10") { $0.verify.perKeyRate = $1 },
        rate("TRIFACTOR_VERIFY_IP_BURST", "--verify-ip-burst", "Phone verification starts and rejected credentials per client IP in a burst", "30") { $0.verify.perIPBurst = $1 },
        rate("TRIFACTOR_VERIFY_IP_RATE", "--verify-ip-rate", "Phone verification starts per client IP per second after the burst", "0.5") { $0.verify.perIPRate = $1 },
        rate("TRIFACTOR_VERIFY_COUNTRY_BURST", "--verify-country-burst", "Phone verifications per country calling code in a burst", "200") { $0.verify.perCountryBurst = $1 },
        rate("TRIFACTOR_VERIFY_COUNTRY_RATE", "--verify-country-rate", "Phone verifications per country calling code per second after the burst", "2") { $0.verify.perCountryRate = $1 },
        int("TRIFACTOR_VERIFY_MAX_FAILURES", "--verify-max-failures", "Wrong codes per number per day before it is refused", "10", 1...1000) { $0.verify.maxFailuresPerNumber = $1 },
        Setting(variable: "TRIFACTOR_TEST_NUMBERS", flag: "--test-numbers", valueName: "LIST",
                help: "Test numbers with fixed codes that never send: 447400123999=1234,...", defaultText: "none") { c, v in
            var numbers: [String: String] = [:]
            for item in v.split(separator: ",") where !item.trimmingCharacters(in: .whitespaces).isEmpty {
                let parts = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2, let first = parts[0].first, first != "0", parts[0].count >= 7, parts[0].count <= 15,
                      parts[0].allSatisfy({ $0.isASCII && $0.isNumber }),
                      VerifyWorkflow.isValidCode(parts[1])
                else { return "TRIFACTOR_TEST_NUMBERS must look like 447400123999=1234,15555550100=654321 (E.164 digits = a 4-10 character code)." }
                numbers[parts[0]] = parts[1]
            }
            c.verify.testNumbers = numbers
            return nil
        },
        seconds("TRIFACTOR_DRAIN_TIMEOUT", "--drain-timeout", "Seconds to finish requests in flight on SIGTERM", "30") { $0.drainTimeout = $1 },
    ]

    private static func pem(_ variable: String, _ flag: String, _ help: String,
                            _ set: @escaping @Sendable (inout Configuration, String) -> Void) -> Setting {
        Setting(variable: variable, flag: flag, valueName: "FILE", help: help, defaultText: "none (plain HTTP)") { c, v in
            guard let text = try? String(contentsOfFile: v, encoding: .utf8) else { return "\(variable) names a file that cannot be read: \(v)." }
            guard text.contains("-----BEGIN ") else { return "\(variable) is not a PEM file: \(v)." }
            set(&c, text)
            return nil
        }
    }

    /// An hourly and daily budget of the SMS-pumping guard (`N/h,N/d`).
    private static func budget(_ variable: String, _ flag: String, _ help: String, _ def: String,
                               _ field: any WritableKeyPath<VerifySettings.Budgets, VerifySettings.Budget> & Sendable) -> Setting {
        Setting(variable: variable, flag: flag, valueName: "N/h,N/d", help: help, defaultText: def) { c, v in
            guard let budget = Self.budget(v) else { return "\(variable) must be like \(def)." }
            c.verify.budgets[keyPath: field] = budget
            return nil
        }
    }

    private static func int(_ variable: String, _ flag: String, _ help: String, _ def: String, _ range: ClosedRange<Int>,
                            _ set: @escaping @Sendable (inout Configuration, Int) -> Void) -> Setting {
        Setting(variable: variable, flag: flag, valueName: "N", help: help, defaultText: def) { c, v in
            guard let n = Int(v), range.contains(n) else { return "\(variable) must be a whole number from \(range.lowerBound) to \(range.upperBound)." }
            set(&c, n)
            return nil
        }
    }

    private static func seconds(_ variable: String, _ flag: String, _ help: String, _ def: String,
                                _ set: @escaping @Sendable (inout Configuration, Double) -> Void) -> Setting {
        Setting(variable: variable, flag: flag, valueName: "SECONDS", help: help, defaultText: def) { c, v in
            guard let n = Double(v), n > 0, n <= 31_536_000 else { return "\(variable) must be a number of seconds above 0." }
            set(&c, n)
            return nil
        }
    }

    private static func rate(_ variable: String, _ flag: String, _ help: String, _ def: String,
                             _ set: @escaping @Sendable (inout Configuration, Double) -> Void) -> Setting {
        Setting(variable: variable, flag: flag, valueName: "N", help: help, defaultText: def) { c, v in
            guard let n = Double(v), n > 0, n <= 1_000_000 else { return "\(variable) must be a number above 0." }
            set(&c, n)
            return nil
        }
    }
}

extension Setting {
    /// "44, 49,33" → {44, 49, 33}; nil unless every entry is a calling code (1 to 3 digits, no leading zero).
    static func callingCodes(_ text: String) -> Set<Int>? {
        let entries = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "+", with: "") }
        guard !entries.isEmpty else { return nil }
        var codes = Set<Int>()
        for entry in entries {
            guard (1...3).contains(entry.count), entry.first != "0", let code = Int(entry) else { return nil }
            codes.insert(code)
        }
        return codes
    }
}

extension Setting {
    /// "20/h,100/d" → a budget of 20 an hour and 100 a day.
    static func budget(_ text: String) -> VerifySettings.Budget? {
        var hour: Double?, day: Double?
        for part in text.split(separator: ",") {
            let pieces = part.trimmingCharacters(in: .whitespaces).split(separator: "/")
            guard pieces.count == 2, let n = Double(pieces[0]), n >= 1, n <= 10_000_000 else { return nil }
            switch pieces[1] {
            case "h": hour = n
            case "d": day = n
            default: return nil
            }
        }
        guard let hour, let day, hour <= day else { return nil }
        return .init(perHour: hour, perDay: day)
    }
}
