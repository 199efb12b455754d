import Core
import Foundation

/// Accounts and what proves them: password hashing, session lifetimes, the
/// freshness a factor change needs, the key ring sealing TOTP secrets,
/// cracklib's dictionary, the WebAuthn relying party and web origins, the
/// approval keys a device must bring, and the issuer authenticator apps show.
extension Setting {
    static let accounts: [Setting] = [
        int("TRIFACTOR_ARGON2_OPSLIMIT", "--argon2-opslimit", "Argon2id passes (t)", "2", 1...32) {
            $0.argon2OpsLimit = UInt64($1)
        },
        int("TRIFACTOR_ARGON2_MEMORY_KIB", "--argon2-memory-kib", "Argon2id memory in KiB (m)", "19456", 8...4_194_304)
        { $0.argon2MemoryKiB = $1 },
        seconds("TRIFACTOR_SESSION_IDLE_TIMEOUT", "--session-idle-timeout", "Seconds a session may sit unused", "1800")
        { $0.sessions.idleTimeout = $1 },
        seconds("TRIFACTOR_SESSION_LIFETIME", "--session-lifetime", "Seconds a session lives at most", "43200") {
            $0.sessions.absoluteLifetime = $1
        },
        seconds(
            "TRIFACTOR_SESSION_AAL2_IDLE_TIMEOUT", "--session-aal2-idle-timeout",
            "Seconds an AAL2 session may sit unused", "3600"
        ) { $0.sessionsAAL2.idleTimeout = $1 },
        seconds(
            "TRIFACTOR_SESSION_AAL2_LIFETIME", "--session-aal2-lifetime", "Seconds an AAL2 session lives at most",
            "86400"
        ) { $0.sessionsAAL2.absoluteLifetime = $1 },
        int(
            "TRIFACTOR_MAX_SESSIONS_PER_USER", "--max-sessions-per-user",
            "Live sessions a user may hold; a new sign-in beyond it ends the oldest",
            "50", 1...10_000
        ) { $0.maxSessionsPerUser = $1 },
        seconds(
            "TRIFACTOR_REAUTH_WINDOW", "--reauth-window",
            "Seconds a proof stays fresh for enrolling or removing factors", "300"
        ) { $0.reauthenticationWindow = $1 },
        Setting(
            variable: "TRIFACTOR_KEY_FILE", flag: "--key-file", valueName: "FILE",
            help: "Key ring sealing TOTP secrets (ID CREATED BASE64 per line, or one base64 key); dev mode creates it",
            defaultText: "data/trifactor.key"
        ) { c, v in
            guard !v.isEmpty else { return "TRIFACTOR_KEY_FILE must name a file." }
            c.keyFile = v
            return nil
        },
        Setting(
            variable: "TRIFACTOR_PASSWORD_DICTIONARY", flag: "--password-dictionary", valueName: "PATH",
            help:
                "cracklib's packed dictionary (without .pwd) that new passwords are checked against; Debian's cracklib-runtime builds it",
            defaultText: "/var/cache/cracklib/cracklib_dict"
        ) { c, v in
            guard !v.isEmpty else { return "TRIFACTOR_PASSWORD_DICTIONARY must name a dictionary." }
            c.passwordDictionary = v
            return nil
        },
        seconds(
            "TRIFACTOR_KEY_RETIRE_AFTER", "--key-retire-after",
            "Seconds a rotated key must have sealed before older keys, once unused, are retired", "60"
        ) {
            $0.keyRetireAfter = $1
        },
        Setting(
            variable: "TRIFACTOR_WEBAUTHN_RP_ID", flag: "--webauthn-rp-id", valueName: "DOMAIN",
            help: "WebAuthn relying-party id (the site's domain)", defaultText: "localhost"
        ) { c, v in
            guard !v.isEmpty, v.count <= 253, !v.contains("/"), !v.contains(":") else {
                return "TRIFACTOR_WEBAUTHN_RP_ID must be a domain such as bank.example."
            }
            c.rpID = v.lowercased()
            return nil
        },
        Setting(
            variable: "TRIFACTOR_WEBAUTHN_RP_NAME", flag: "--webauthn-rp-name", valueName: "NAME",
            help: "WebAuthn relying-party name shown by browsers", defaultText: "Trifactor"
        ) { c, v in
            guard (1...64).contains(v.count) else { return "TRIFACTOR_WEBAUTHN_RP_NAME must be 1 to 64 characters." }
            c.rpName = v
            return nil
        },
    ]

    static let deviceApprovalKeys: [Setting] = [
        Setting(
            variable: "TRIFACTOR_DEVICE_APPROVAL_KEY", flag: "--device-approval-key",
            valueName: "optional|required|biometric",
            help:
                "What a new device must bring: an approval key released by the user's check (required), one released by biometrics only (biometric), or either or none (optional)",
            defaultText: "optional"
        ) { c, v in
            guard let policy = DeviceApprovalKeys(rawValue: v) else {
                return "TRIFACTOR_DEVICE_APPROVAL_KEY must be optional, required or biometric."
            }
            c.deviceApprovalKeys = policy
            return nil
        }
    ]

    static let passkeysAndApps: [Setting] = [
        Setting(
            variable: "TRIFACTOR_ORIGINS", flag: "--origins", valueName: "LIST",
            help: "Web origins allowed for passkeys, exact (https://bank.example,...)",
            defaultText: "none (dev: http://localhost:*)"
        ) { c, v in
            let list = v.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard list.allSatisfy({ ($0.hasPrefix("https://") || $0.hasPrefix("http://")) && !$0.hasSuffix("/") })
            else {
                return "TRIFACTOR_ORIGINS must list origins like https://bank.example, without a trailing slash."
            }
            c.origins = Set(list)
            return nil
        },
        Setting(
            variable: "TRIFACTOR_TOTP_ISSUER", flag: "--totp-issuer", valueName: "NAME",
            help: "Issuer shown in authenticator apps and named in phone codes", defaultText: "Trifactor"
        ) { c, v in
            guard (1...40).contains(v.count), !v.contains(":") else {
                return "TRIFACTOR_TOTP_ISSUER must be 1 to 40 characters without a colon."
            }
            c.totpIssuer = v
            return nil
        },
    ]
}
