import Foundation
import Logging
import Glibc
import HTTP

/// `trifactord serve`: runs until SIGTERM or SIGINT, then stops accepting,
/// finishes the requests in flight and returns (exit 0).
enum ServeCommand {
    static func run(_ configuration: Configuration) throws {
        // Block the signals in every thread (threads inherit the mask), so
        // only the sigwait below receives them.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGINT)
        pthread_sigmask(SIG_BLOCK, &signals, nil)

        let logger = Logger.standardError
        let runtime = try Application.start(configuration, logger: logger)
        var received: Int32 = 0
        sigwait(&signals, &received)
        logger.log("info", "stopping", ["signal": .int(Int(received)), "in_flight": .int(runtime.server.requestsInFlight)])
        runtime.stop(drainTimeout: configuration.drainTimeout)
        runtime.database.close()
        logger.log("info", "stopped")
        Logger.flushStandardError()
    }
}

/// `trifactord migrate`.
enum MigrateCommand {
    static func run(_ configuration: Configuration) throws {
        let database = try Store.openDatabase(url: configuration.databaseURL, poolSize: 1)
        defer { database.close() }
        let applied = try database.migrate(Schema.migrations)
        print(applied.isEmpty ? "The database is up to date." : "Applied migrations \(applied.map(String.init).joined(separator: ", ")).")
    }
}

import Store
