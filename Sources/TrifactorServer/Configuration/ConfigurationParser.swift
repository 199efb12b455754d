import Foundation
import HTTP

/// Reads the configuration from environment variables, then flags (a flag
/// wins over its variable).
enum ConfigurationParser {
    /// A sentence saying what is wrong with the given settings.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Parses `arguments` (flags only, `--flag value` or `--flag=value`) over
    /// the `environment`.
    /// A setting given by its former name (`Setting.renamed`) is read as its successor, unless the successor is
    /// given too, and each use adds a sentence to `Configuration.deprecations`, printed on standard error as a warning
    /// (every command parses its settings once) and `trifactord doctor` reports.
    static func parse(arguments: [String], environment: [String: String]) throws -> Configuration {
        var config = Configuration()
        var environment = environment
        for old in Setting.renamed {
            guard let value = environment[old.variable] else { continue }
            environment[old.variable] = nil
            if environment[old.successor] == nil {
                environment[old.successor] = value
                config.deprecations.append(
                    "\(old.variable) is now \(old.successor): rename it in your settings (the old name is read until \(old.until))."
                )
            } else {
                config.deprecations.append(
                    "\(old.variable) is ignored: \(old.successor), its new name, is set too. Remove \(old.variable).")
            }
        }
        for setting in Setting.all {
            if let value = environment[setting.variable], let problem = setting.apply(&config, value) {
                throw Failure(description: problem)
            }
        }
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            var name = argument
            var value: String?
            if let eq = argument.firstIndex(of: "=") {
                name = String(argument[..<eq])
                value = String(argument[argument.index(after: eq)...])
            }
            if let old = Setting.renamed.first(where: { $0.flag == name }),
                let successor = Setting.all.first(where: { $0.variable == old.successor })
            {
                config.deprecations.append(
                    "\(old.flag) is now \(successor.flag): change your command line (the old name is read until \(old.until))."
                )
                name = successor.flag
            }
            guard let setting = Setting.all.first(where: { $0.flag == name }) else {
                throw Failure(description: "Unknown option \(name): see trifactord serve --help.")
            }
            if value == nil {
                if setting.flag == "--dev" && (index + 1 >= arguments.count || arguments[index + 1].hasPrefix("--")) {
                    value = "1"
                } else {
                    index += 1
                    guard index < arguments.count else {
                        throw Failure(description: "The option \(name) needs a value.")
                    }
                    value = arguments[index]
                }
            }
            if let problem = setting.apply(&config, value!) {
                throw Failure(description: problem.replacingOccurrences(of: setting.variable, with: setting.flag))
            }
            index += 1
        }
        if (config.http.tlsCertificatePEM == nil) != (config.http.tlsKeyPEM == nil) {
            throw Failure(description: "TLS needs both a certificate (--tls-cert) and a key (--tls-key).")
        }
        if config.registration == .token && config.registrationToken == nil {
            throw Failure(
                description:
                    "--oidc-registration token needs --oidc-registration-token-file: the initial access token clients present."
            )
        }
        if config.registration != .off && !config.oidc {
            throw Failure(description: "--oidc-registration needs the OpenID Provider on (--oidc 1).")
        }
        if config.oidc && config.publicURL == nil {
            throw Failure(
                description:
                    "The OpenID Provider (--oidc 1) needs --public-url: it is the issuer every token names, like https://auth.example.com."
            )
        }
        warnDeprecations(config)
        return config
    }

    /// Prints each of `configuration.deprecations` on standard error, once per command.
    static func warnDeprecations(_ configuration: Configuration) {
        for sentence in configuration.deprecations {
            FileHandle.standardError.write(Data(("trifactord: warning: " + sentence + "\n").utf8))
        }
    }

    /// The table of settings for `--help`.
    static func helpTable() -> String {
        Setting.all.map { s in
            let left = "  \(s.flag) \(s.valueName)"
            return left.padding(toLength: max(34, left.count + 1), withPad: " ", startingAt: 0)
                + "\(s.help)\n" + String(repeating: " ", count: 34) + "env \(s.variable), default \(s.defaultText)"
        }.joined(separator: "\n")
    }
}
