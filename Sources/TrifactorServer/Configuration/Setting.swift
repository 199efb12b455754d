/// One configurable value: its environment variable, its flag, the help text,
/// and how to apply a textual value. The single list `all` (its parts in the
/// `Setting+*.swift` files, one per concern) drives parsing and both `--help`
/// texts, so they cannot drift apart.
struct Setting: Sendable {
    let variable: String
    let flag: String
    let valueName: String
    let help: String
    let defaultText: String
    /// Applies the value, or returns the sentence saying why it is invalid.
    let apply: @Sendable (inout Configuration, String) -> String?

    /// Every setting, in the order `--help` lists them.
    static let all: [Setting] =
        server + accounts + verifyGuards + deviceApprovalKeys + clockOffset + proxies + passkeysAndApps + limits
        + verifyLimits
        + shutdown + delivery + webhooks + provider

    /// A setting's former name, still read for one release with a warning naming its successor
    /// (docs/operations/upgrades.md). Drop an entry in the release named by `until`.
    struct Renamed: Sendable {
        let variable: String
        let flag: String
        let successor: String
        let until: String
    }

    /// The names that changed: WebAuthn's "relying party" is the site passkeys belong to, not one of the
    /// OpenID Provider's relying parties (its clients), so its two settings say WebAuthn since 0.11.0.
    static let renamed: [Renamed] = [
        Renamed(variable: "TRIFACTOR_RP_ID", flag: "--rp-id", successor: "TRIFACTOR_WEBAUTHN_RP_ID", until: "0.12.0"),
        Renamed(
            variable: "TRIFACTOR_RP_NAME", flag: "--rp-name", successor: "TRIFACTOR_WEBAUTHN_RP_NAME", until: "0.12.0"),
    ]

    // MARK: Kinds of value

    static func int(
        _ variable: String, _ flag: String, _ help: String, _ def: String, _ range: ClosedRange<Int>,
        _ set: @escaping @Sendable (inout Configuration, Int) -> Void
    ) -> Setting {
        Setting(variable: variable, flag: flag, valueName: "N", help: help, defaultText: def) { c, v in
            guard let n = Int(v), range.contains(n) else {
                return "\(variable) must be a whole number from \(range.lowerBound) to \(range.upperBound)."
            }
            set(&c, n)
            return nil
        }
    }

    /// An on/off setting: 1, true, yes or on; 0, false, no, off or empty.
    static func bool(
        _ variable: String, _ flag: String, _ help: String,
        _ set: @escaping @Sendable (inout Configuration, Bool) -> Void
    ) -> Setting {
        Setting(variable: variable, flag: flag, valueName: "0|1", help: help, defaultText: "0") { c, v in
            switch v.lowercased() {
            case "1", "true", "yes", "on": set(&c, true)
            case "0", "false", "no", "off", "": set(&c, false)
            default: return "\(variable) must be 0 or 1."
            }
            return nil
        }
    }

    static func seconds(
        _ variable: String, _ flag: String, _ help: String, _ def: String,
        _ set: @escaping @Sendable (inout Configuration, Double) -> Void
    ) -> Setting {
        Setting(variable: variable, flag: flag, valueName: "SECONDS", help: help, defaultText: def) { c, v in
            guard let n = Double(v), n > 0, n <= 31_536_000 else {
                return "\(variable) must be a number of seconds above 0."
            }
            set(&c, n)
            return nil
        }
    }

    static func rate(
        _ variable: String, _ flag: String, _ help: String, _ def: String,
        _ set: @escaping @Sendable (inout Configuration, Double) -> Void
    ) -> Setting {
        Setting(variable: variable, flag: flag, valueName: "N", help: help, defaultText: def) { c, v in
            guard let n = Double(v), n > 0, n <= 1_000_000 else { return "\(variable) must be a number above 0." }
            set(&c, n)
            return nil
        }
    }
}
