import Foundation
import Logging
import HTTP
import Messaging
import Store

/// Trifactor's HTTP application: every feature's routes over one environment.
public enum Application {
    /// The router with every feature registered.
    static func router(_ env: Environment, probe: ReadinessProbe) -> Router {
        var router = Router()
        HealthRoutes(probe: probe).register(on: &router)
        AccountsRoutes(env: env).register(on: &router)
        SessionsRoutes(env: env).register(on: &router)
        EnrollmentRoutes(env: env).register(on: &router)
        MFASignIn(env: env).register(on: &router)
        PushApprovalRoutes(env: env).register(on: &router)
        PasskeySignIn(env: env).register(on: &router)
        PushSignIn(env: env).register(on: &router)
        SessionListRoutes(env: env).register(on: &router)
        AuthorizationRoutes(env: env).register(on: &router)
        VerifyRoutes(env: env).register(on: &router)
        DevRoutes(env: env).register(on: &router)
        return router
    }

    /// Opens the database, migrates it, and starts listening, with the dev
    /// phone as the message sender in dev mode.
    /// - Throws: a `StoreError` or `HTTPServerError` whose description is one sentence.
    public static func start(_ configuration: Configuration, logger: Logger = .standardError) throws -> Runtime {
        let database = try openDatabase(url: configuration.databaseURL, poolSize: configuration.databasePoolSize)
        let applied = try database.migrate(Schema.migrations)
        if !applied.isEmpty { logger.log("info", "migrated", ["versions": .string(applied.map(String.init).joined(separator: ","))]) }
        var sender: (any MessageSender)?
        if configuration.dev {
            sender = DevPhoneSender { message in
                logger.log("info", "dev_phone", ["id": .string(message.id), "channel": .string(message.channel.rawValue),
                                                 "to": .string(message.to), "text": .string(message.text)])
            }
        } else {
            logger.log("warn", "no_message_sender", ["detail": "emails stay pending and phone codes are refused (503) until a provider is configured"])
        }
        let env = try Environment(database: database, configuration: configuration, logger: logger, sender: sender)
        return try start(env)
    }

    /// Starts the server and the background work over a ready environment.
    public static func start(_ env: Environment, extraRoutes: (inout Router) -> Void = { _ in }) throws -> Runtime {
        let probe = ReadinessProbe(database: env.database, logger: env.logger)
        probe.check()
        var router = router(env, probe: probe)
        extraRoutes(&router)
        var http = env.configuration.http
        http.databaseThreads = env.configuration.databasePoolSize
        let server = HTTPServer(configuration: http, router: router, logger: env.logger, hub: env.hub)
        #if DEBUG
        // A regression that waits on the database on an HTTP thread stops the tests at once.
        DatabaseAccess.onAcquire { precondition(!HTTPServer.isHTTPThread, "database work on an HTTP thread: give the route an executor") }
        #endif
        try server.start()
        var tasks: [PeriodicTask] = [PeriodicTask(name: "readiness", interval: 1, logger: env.logger) { probe.check(); return false }]
        if let sender = env.sender {
            let dispatcher = OutboxDispatcher(env: env, sender: sender, onFailed: deliveryFailed(env))
            tasks.append(PeriodicTask(name: "outbox", interval: 0.1, logger: env.logger) { try dispatcher.runOnce() > 0 })
        }
        // Phone verification deadlines live in the database; this applies the due ones (a restart loses none).
        tasks.append(PeriodicTask(name: "verify-timers", interval: 1, logger: env.logger) {
            // A full batch means more may be due: go again at once.
            try VerifyService(env: env).runDue() == VerifyService.dueBatch
        })
        // Session uses seen in memory, written once a second in one transaction.
        tasks.append(PeriodicTask(name: "session-uses", interval: 1, logger: env.logger) {
            let uses = env.sessionCache.drainTouches()
            if !uses.isEmpty { try env.transaction { try SessionRepository.touch(uses, on: $0) } }
            return false
        })
        tasks.append(PeriodicTask(name: "housekeeping", interval: 600, logger: env.logger) {
            let r = try env.transaction { try Housekeeping.purge(now: env.nowMillis, on: $0) }
            if r != Housekeeping.Report() { env.logger.log("info", "housekeeping", ["purged": .string(String(describing: r))]) }
            return false
        })
        for task in tasks { task.start() }
        let listener = ChangeFeed.listen(local: env.local, lost: { [hub = env.hub] in hub.notifyAll() }, database: env.database)
        env.logger.log("info", "listening", ["host": .string(env.configuration.http.host), "port": .int(server.port),
                                             "tls": .bool(env.configuration.http.usesTLS), "dev": .bool(env.configuration.dev)])
        return Runtime(server: server, env: env, tasks: tasks, listener: listener)
    }

    /// Routes a message that failed for good to the feature that sent it.
    static func deliveryFailed(_ env: Environment) -> @Sendable (String, any SQLConnection) throws -> Void {
        { ref, db in
            if ref.hasPrefix("verify:") { try VerifyService(env: env).deliveryFailed(ref: ref, on: db) }
        }
    }
}

/// A running Trifactor: the HTTP server and its background work.
public final class Runtime: Sendable {
    public let server: HTTPServer
    public let env: Environment
    let tasks: [PeriodicTask]
    let listener: (any DatabaseListener)?

    init(server: HTTPServer, env: Environment, tasks: [PeriodicTask], listener: (any DatabaseListener)?) {
        self.server = server
        self.env = env
        self.tasks = tasks
        self.listener = listener
    }

    /// Stops taking requests, finishes those in flight, then stops delivering and listening.
    public func stop(drainTimeout: TimeInterval) {
        server.stop(drainTimeout: drainTimeout)
        for task in tasks { task.stop() }
        listener?.stop()
    }
}
