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
    /// A setting given by its former name (`Setting.renamed`) is read as its successor; when the successor is given
    /// the same way too (both variables, or both flags) the successor wins and the former is ignored, and a flag
    /// still wins over a variable. Each use adds a sentence to `Configuration.deprecations`, which `trifactord
    /// doctor` reports and which is printed on standard error as a warning when `warn` (serve logs them instead),
    /// even when the settings are then refused. A value refused under a former name is named by that name.
    static func parse(arguments: [String], environment: [String: String], warn: Bool = true) throws -> Configuration {
        var config = Configuration()
        defer { if warn { warnDeprecations(config) } }
        var environment = environment
        var formerVariable: [String: String] = [:]  // successor → the former name it was given by
        for old in Setting.renamed {
            guard let value = environment[old.variable] else { continue }
            environment[old.variable] = nil
            if environment[old.successor] == nil {
                environment[old.successor] = value
                formerVariable[old.successor] = old.variable
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
                throw Failure(
                    description: formerVariable[setting.variable].map {
                        problem.replacingOccurrences(of: setting.variable, with: $0)
                    } ?? problem)
            }
        }
        let flagsGiven = Set(arguments.map { $0.split(separator: "=", maxSplits: 1).first.map(String.init) ?? $0 })
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            var name = argument
            var value: String?
            if let eq = argument.firstIndex(of: "=") {
                name = String(argument[..<eq])
                value = String(argument[argument.index(after: eq)...])
            }
            let shownName = name
            var ignored = false
            if let old = Setting.renamed.first(where: { $0.flag == name }),
                let successor = Setting.all.first(where: { $0.variable == old.successor })
            {
                if flagsGiven.contains(successor.flag) {
                    ignored = true
                    config.deprecations.append(
                        "\(old.flag) is ignored: \(successor.flag), its new name, is given too. Remove \(old.flag).")
                } else {
                    config.deprecations.append(
                        "\(old.flag) is now \(successor.flag): change your command line (the old name is read until \(old.until))."
                    )
                }
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
                        throw Failure(description: "The option \(shownName) needs a value.")
                    }
                    value = arguments[index]
                }
            }
            if !ignored, let problem = setting.apply(&config, value!) {
                throw Failure(description: problem.replacingOccurrences(of: setting.variable, with: shownName))
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
