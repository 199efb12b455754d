import Core
import Foundation
package import Logging
import Messaging
import Store

extension Application {
    /// Opens the database, migrates it, reads the key file, the password
    /// blocklist and dictionary, and starts listening, with the dev phone as the message
    /// sender in dev mode.
    /// - Throws: a `StoreError`, `HTTPServerError`, `KeyFile.Failure` or `ResourceFailure` whose description is one sentence.
    package static func start(_ configuration: Configuration, logger: Logger = .standardError) throws -> Runtime {
        let passwords = try CommonPasswords.policy(dictionary: configuration.passwordDictionary)
        let database = try openDatabase(url: configuration.databaseURL, poolSize: configuration.databasePoolSize)
        let applied = try SchemaUpgrade.atStart(configuration, database, logger: logger)
        if !applied.isEmpty {
            logger.log(.info, "migrated", ["versions": .string(applied.map(String.init).joined(separator: ","))])
        }
        let existed = FileManager.default.fileExists(atPath: configuration.keyFile)
        if !existed { try KeyFile.checkOpens(nil, path: configuration.keyFile, database: database) }
        let sealer = try KeyFile.load(configuration, logger: logger)
        if existed { try KeyFile.checkOpens(sealer, path: configuration.keyFile, database: database) }
        var senders: [any MessageSender] = []
        if let smtp = configuration.smtp {
            senders.append(SMTPSender(smtp))
            logger.log(
                .info, "smtp",
                [
                    "server": .string(smtp.url.host ?? ""), "from": .string(smtp.from),
                    "starttls_required": .bool(smtp.requireTLS),
                ])
        }
        if !configuration.providers.isEmpty {
            var providers: [any MessageSender] = []
            for account in configuration.providers {
                switch account.kind {
                case .vonage:
                    do { providers.append(try VonageSender(account, callbackBase: configuration.publicURL)) } catch {
                        throw ResourceFailure(description: error.description)
                    }
                case .twilio:
                    providers.append(TwilioSender(account, callbackBase: configuration.publicURL))
                }
                logger.log(
                    .info, "sms_provider",
                    [
                        "account": .string(account.description),
                        "channels": .string(account.channels.map(\.rawValue).sorted().joined(separator: ",")),
                    ])
            }
            senders.append(
                FailoverSender(providers) { failure, message in
                    logger.log(
                        .warning, "provider_failover",
                        [
                            "message_id": .string(message.id), "channel": .string(message.channel.rawValue),
                            "reason": .string(failure.reason),
                        ])
                })
            if configuration.publicURL == nil {
                logger.log(
                    .warning, "no_public_url",
                    ["detail": "providers are not asked for delivery receipts until TRIFACTOR_PUBLIC_URL is set"])
            }
        }
        if configuration.dev {
            senders.append(
                DevPhoneSender { message in
                    logger.log(
                        .info, "dev_phone",
                        [
                            "message_id": .string(message.id), "channel": .string(message.channel.rawValue),
                            "to": .string(message.to), "text": .string(message.text),
                        ])
                })
        } else if configuration.providers.isEmpty {
            logger.log(
                .warning, "no_phone_sender",
                ["detail": "phone codes are refused (503) until an SMS and voice provider is configured"])
        }
        // Back-channel logout tokens are posted to relying parties, in dev mode too: first, so it wins their channel.
        if configuration.oidc {
            senders.insert(BackchannelLogoutSender(), at: 0)
            senders.insert(CIBAPingSender(), at: 0)
        }
        let sender: (any MessageSender)? = senders.isEmpty ? nil : RoutingSender(senders)
        var clock = Clock.system
        if configuration.clockOffset != 0 {
            let offset = configuration.clockOffset
            clock = Clock { Date().addingTimeInterval(offset) }
            logger.log(
                .warning, "clock_offset",
                ["seconds": .double(offset), "detail": "this instance's clock is moved for a fault drill"])
        }
        let services = try Services.live(
            database: database, configuration: configuration, sealer: sealer, passwords: passwords, sender: sender,
            clock: clock, logger: logger)
        return try start(services)
    }
}
