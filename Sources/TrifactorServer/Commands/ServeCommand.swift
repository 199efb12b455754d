import Foundation
import Glibc
import HTTP
import Logging
import Store

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
        for sentence in configuration.deprecations {
            logger.log(.warning, "deprecated_setting", ["detail": .string(sentence)])
        }
        let runtime = try Application.start(configuration, logger: logger)
        raiseFileLimit(for: configuration, logger: logger)
        // Type=notify: systemd counts the service started once it listens with its database migrated.
        ServiceNotify.send("READY=1\nSTATUS=Serving on \(configuration.http.host):\(runtime.server.port)")
        var received: Int32 = 0
        sigwait(&signals, &received)
        ServiceNotify.send("STOPPING=1\nSTATUS=Finishing the requests in flight")
        logger.log(
            .info, "stopping", ["signal": .int(Int(received)), "in_flight": .int(runtime.server.requestsInFlight)])
        runtime.stop(drainTimeout: configuration.drainTimeout)
        runtime.database.close()
        logger.log(.info, "stopped")
        Logger.flushStandardError()
    }

    /// Each connection is a file descriptor: the soft limit is raised to the hard one (often 1,024 by
    /// default, far below `--max-connections`), and the operator is told when even that is too low.
    static func raiseFileLimit(for configuration: Configuration, logger: Logger) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        let before = limit.rlim_cur
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) != 0 { limit.rlim_cur = before }
        }
        // The pool, the listener, the log and the database want some to spare.
        let needed = rlim_t(configuration.http.connectionLimit + configuration.databasePoolSize + 64)
        var fields: [String: Logger.Value] = [
            "soft": .int(Int(limit.rlim_cur)), "was": .int(Int(before)),
            "connections": .int(configuration.http.connectionLimit),
        ]
        if limit.rlim_cur < needed {
            fields["detail"] = .string(
                "raise the hard limit (ulimit -Hn, LimitNOFILE=) or lower TRIFACTOR_MAX_CONNECTIONS")
        }
        logger.log(limit.rlim_cur < needed ? .warning : .info, "file_limit", fields)
    }
}

/// `trifactord migrate [--check]`.
enum MigrateCommand {
    /// Applies what is pending (a SQLite database backed up beside itself first); with `check`, only lists it.
    /// - Returns: the exit code: with `check`, 1 when migrations are pending.
    static func run(_ configuration: Configuration, check: Bool) throws -> Int32 {
        let database = try Store.openDatabase(url: configuration.databaseURL, poolSize: 1)
        defer { database.close() }
        let pending = try SchemaUpgrade.pending(database)
        if check {
            print(
                pending.isEmpty
                    ? "The database is up to date."
                    : "Pending migrations: \(SchemaUpgrade.describe(pending)). Run trifactord migrate (after a backup on PostgreSQL)."
            )
            return pending.isEmpty ? 0 : 1
        }
        let applied = try SchemaUpgrade.apply(configuration, database, logger: .standardError)
        print(
            applied.isEmpty
                ? "The database is up to date."
                : "Applied migrations \(applied.map(String.init).joined(separator: ", ")).")
        return 0
    }
}
