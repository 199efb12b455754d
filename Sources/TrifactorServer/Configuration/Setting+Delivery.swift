import Foundation
import Messaging

/// How messages leave: email over SMTP, texts and calls through providers,
/// the public URL their receipts come back to, and the language of messages.
extension Setting {
    static let delivery: [Setting] = [
        Setting(
            variable: "TRIFACTOR_SMTP_URL", flag: "--smtp-url", valueName: "URL",
            help:
                "Send email through this SMTP server: smtp://USER@HOST:587 (STARTTLS required) or smtps://USER@HOST:465",
            defaultText: "none"
        ) { c, v in
            guard let url = URL(string: v), ["smtp", "smtps"].contains(url.scheme ?? ""), url.host != nil,
                url.password == nil
            else {
                return
                    "TRIFACTOR_SMTP_URL must be smtp://USER@HOST:PORT or smtps://…, with the password in TRIFACTOR_SMTP_PASSWORD_FILE."
            }
            var smtp =
                c.smtp
                ?? SMTPSender.Settings(url: url, password: nil, from: "Trifactor <noreply@\(url.host ?? "localhost")>")
            smtp.url = url
            c.smtp = smtp
            return nil
        },
        Setting(
            variable: "TRIFACTOR_SMTP_PASSWORD_FILE", flag: "--smtp-password-file", valueName: "PATH",
            help: "File holding the SMTP password (never logged)", defaultText: "none"
        ) { c, v in
            guard let data = FileManager.default.contents(atPath: v), let text = String(data: data, encoding: .utf8),
                !text.isEmpty
            else {
                return "TRIFACTOR_SMTP_PASSWORD_FILE (\(v)) cannot be read."
            }
            guard var smtp = c.smtp else { return "Set TRIFACTOR_SMTP_URL before TRIFACTOR_SMTP_PASSWORD_FILE." }
            smtp.password = text.trimmingCharacters(in: .newlines)
            c.smtp = smtp
            return nil
        },
        mailbox(
            "TRIFACTOR_SMTP_FROM", "--smtp-from", "From of every email", example: "Trifactor <noreply@example.com>",
            defaultText: "Trifactor <noreply@SMTP host>"
        ) { $0.from = $1 },
        Setting(
            variable: "TRIFACTOR_SMTP_CA_FILE", flag: "--smtp-ca-file", valueName: "PATH",
            help: "CA bundle to trust for the SMTP server instead of the system's", defaultText: "system"
        ) { c, v in
            guard FileManager.default.fileExists(atPath: v), var smtp = c.smtp else {
                return "TRIFACTOR_SMTP_CA_FILE must name a PEM file, after TRIFACTOR_SMTP_URL."
            }
            smtp.caFile = v
            c.smtp = smtp
            return nil
        },
        Setting(
            variable: "TRIFACTOR_SMTP_PASSWORD", flag: "--smtp-password", valueName: "SECRET",
            help:
                "The SMTP password itself, for platforms that inject secrets as variables (a file is safer; never logged)",
            defaultText: "none"
        ) { c, v in
            guard var smtp = c.smtp, !v.isEmpty else {
                return "Set TRIFACTOR_SMTP_URL before TRIFACTOR_SMTP_PASSWORD, and give a password."
            }
            smtp.password = v
            c.smtp = smtp
            return nil
        },
        mailbox(
            "TRIFACTOR_SMTP_REPLY_TO", "--smtp-reply-to", "Reply-To of every email",
            example: "Support <help@example.com>",
            defaultText: "none"
        ) { $0.replyTo = $1 },
        Setting(
            variable: "TRIFACTOR_METRICS_TOKEN_FILE", flag: "--metrics-token-file", valueName: "PATH",
            help:
                "File holding the bearer token GET /metrics asks for (Prometheus' authorization.credentials_file); without it /metrics answers 404",
            defaultText: "none"
        ) { c, v in
            guard let data = FileManager.default.contents(atPath: v), let text = String(data: data, encoding: .utf8)
            else {
                return "TRIFACTOR_METRICS_TOKEN_FILE (\(v)) cannot be read."
            }
            let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard token.count >= 16,
                token.unicodeScalars.allSatisfy({
                    $0.isASCII && $0.properties.isWhitespace == false && $0.value >= 0x21
                })
            else {
                return
                    "TRIFACTOR_METRICS_TOKEN_FILE must hold a token of at least 16 printable characters (openssl rand -hex 32 makes one)."
            }
            c.metricsToken = token
            return nil
        },
        Setting(
            variable: "TRIFACTOR_SMS_PROVIDER", flag: "--sms-provider", valueName: "LIST",
            help:
                "Texts and calls through these accounts, in failover order: vonage://KEY@?from=Trifactor&secret_file=PATH, twilio://SID@?from=+15005550006&token_file=PATH",
            defaultText: "none"
        ) { c, v in
            var accounts: [ProviderAccount] = []
            for part in v.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !part.isEmpty {
                do throws(ProviderAccount.Invalid) { accounts.append(try ProviderAccount.parse(part)) } catch {
                    return "TRIFACTOR_SMS_PROVIDER: \(error.description)."
                }
            }
            guard !accounts.isEmpty else {
                return "TRIFACTOR_SMS_PROVIDER must list at least one vonage:// or twilio:// account."
            }
            c.providers = accounts
            return nil
        },
        Setting(
            variable: "TRIFACTOR_PUBLIC_URL", flag: "--public-url", valueName: "URL",
            help: "Where providers reach this server for delivery receipts (https://auth.example.com)",
            defaultText: "none: no receipts asked for"
        ) { c, v in
            guard let url = URL(string: v), let scheme = url.scheme, ["https", "http"].contains(scheme),
                url.host != nil, url.query == nil,
                scheme == "https" || ["127.0.0.1", "localhost", "::1"].contains(url.host ?? "")
            else {
                return "TRIFACTOR_PUBLIC_URL must be an https:// URL without a query (http only on loopback)."
            }
            c.publicURL = url
            return nil
        },
        Setting(
            variable: "TRIFACTOR_DELIVERY_ATTEMPTS", flag: "--delivery-attempts", valueName: "N",
            help: "Tries per message (backing off 2, 4, 8… seconds) before it is failed and audited", defaultText: "5"
        ) { c, v in
            guard let n = Int(v), (1...20).contains(n) else {
                return "TRIFACTOR_DELIVERY_ATTEMPTS must be a whole number from 1 to 20."
            }
            c.deliveryAttempts = n
            return nil
        },
        Setting(
            variable: "TRIFACTOR_SMS_MAX_SEGMENTS", flag: "--sms-max-segments", valueName: "N",
            help: "Segments a text may take before its optional sentences are dropped (never the code)",
            defaultText: "1"
        ) { c, v in
            guard let n = Int(v), (1...6).contains(n) else {
                return "TRIFACTOR_SMS_MAX_SEGMENTS must be a whole number from 1 to 6."
            }
            c.smsMaxSegments = n
            return nil
        },
        Setting(
            variable: "TRIFACTOR_MESSAGE_LANGUAGE", flag: "--message-language", valueName: "CODE",
            help:
                "Language of messages whose locale and user name none of ours: \(MessageCatalog.bundled.languages.keys.sorted().joined(separator: ", "))",
            defaultText: "en"
        ) { c, v in
            guard MessageCatalog.bundled.languages[v.lowercased()] != nil else {
                return
                    "TRIFACTOR_MESSAGE_LANGUAGE must be one of \(MessageCatalog.bundled.languages.keys.sorted().joined(separator: ", "))."
            }
            c.messageLanguage = v.lowercased()
            return nil
        },
    ]

    /// A mailbox of the SMTP settings (`Name <address>`, one line), given after `TRIFACTOR_SMTP_URL`.
    private static func mailbox(
        _ variable: String, _ flag: String, _ help: String, example: String, defaultText: String,
        _ set: @escaping @Sendable (inout SMTPSender.Settings, String) -> Void
    ) -> Setting {
        Setting(
            variable: variable, flag: flag, valueName: "MAILBOX", help: "\(help): \(example)", defaultText: defaultText
        ) { c, v in
            guard v.contains("@"), !v.contains("\r"), !v.contains("\n"), var smtp = c.smtp else {
                return "\(variable) must be a mailbox like \(example), after TRIFACTOR_SMTP_URL."
            }
            set(&smtp, v)
            c.smtp = smtp
            return nil
        }
    }

}
