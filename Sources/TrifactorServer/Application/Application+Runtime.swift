import Core
package import HTTP
import Logging
import Store

extension Application {
    /// Starts the server and the background work over ready services.
    /// `tasks` runs the background loops on threads of their own; tests pass
    /// `.manual` and drive them with `Runtime.tick()`.
    package static func start(
        _ s: Services, tasks mode: PeriodicTask.Mode = .threads, extraRoutes: (inout Router) -> Void = { _ in }
    ) throws -> Runtime {
        let probe = ReadinessProbe(database: s.database, logger: s.logger)
        probe.check()
        // The provider's signing keys exist and are open before the first request (and before a sign-out signs a
        // logout token inside its transaction).
        if let provider = s.provider {
            try provider.keys.ensure()
            try provider.keys.load()
            try provider.ensureOwnPagesClient()
        }
        var router = try router(s, probe: probe)
        extraRoutes(&router)
        var http = s.configuration.http
        http.databaseThreads = s.configuration.databasePoolSize
        let clock = s.clock
        let server = HTTPServer(configuration: http, router: router, logger: s.logger, hub: s.hub, now: { clock.now() })
        #if DEBUG
            // A regression that waits on the database on an HTTP thread stops the tests at once.
            DatabaseAccess.onAcquire {
                precondition(!HTTPServer.isHTTPThread, "database work on an HTTP thread: give the route an executor")
            }
        #endif
        try server.start()
        MetricsRoutes(token: s.configuration.metricsToken, transactions: s.transactions, clock: s.clock).registerGauges
        { [weak server] in server }
        var tasks: [PeriodicTask] = [
            PeriodicTask(name: "readiness", interval: 1, mode: mode, logger: s.logger) {
                probe.check()
                return false
            }
        ]
        // Verification codes asked for again: issued here, a moment after the (uniform) answer.
        let resends = s.accounts.resends
        tasks.append(
            PeriodicTask(name: "email-resends", interval: 0.2, mode: mode, logger: s.logger) {
                try resends.drain() == EmailResends.batch
            })
        if let sender = s.sender {
            let verifications = s.verifications
            let dispatcher = OutboxDispatcher(
                transactions: s.transactions, clock: s.clock, sender: sender, keepsDelivered: s.configuration.dev,
                maxAttempts: s.configuration.deliveryAttempts
            ) { ref, db in
                if ref.hasPrefix("verify:") { try verifications.deliveryFailed(ref: ref, on: db) }
            }
            tasks.append(
                PeriodicTask(name: "outbox", interval: 0.1, mode: mode, logger: s.logger) {
                    try dispatcher.runOnce() > 0
                })
        }
        if let ring = s.webhooks.sealer {
            // Webhook messages: queued by the audit log in each event's transaction, posted from here.
            let webhooks = WebhookDispatcher(
                transactions: s.transactions, clock: s.clock, sender: s.webhooks.sender, sealer: ring, logger: s.logger,
                retryFor: s.configuration.webhooksRetryFor)
            tasks.append(
                PeriodicTask(name: "webhooks", interval: 0.2, mode: mode, logger: s.logger) {
                    try webhooks.runOnce() > 0
                })
        }
        // Test numbers administrators add are read again every few seconds (another instance's change included).
        tasks.append(
            PeriodicTask(name: "test-numbers", interval: 3, mode: mode, logger: s.logger) {
                try s.transactions.read { try s.verifications.testBook.refresh(on: $0) }
                return false
            })
        // Phone verification deadlines live in the database; this applies the due ones (a restart loses none).
        tasks.append(
            PeriodicTask(name: "verify-timers", interval: 1, mode: mode, logger: s.logger) {
                // A full batch means more may be due: go again at once.
                try s.verifications.runDue() == PhoneVerificationService.dueBatch
            })
        // Session uses seen in memory, written once a second in one transaction.
        tasks.append(
            PeriodicTask(name: "session-uses", interval: 1, mode: mode, logger: s.logger) {
                try s.sessions.writeUses()
                return false
            })
        if let ring = s.factors.totp.sealer {
            // Picks up a rotated key ring, re-seals secrets under older keys, retires those nothing uses.
            let resealer = SecretResealer(
                transactions: s.transactions, ring: ring, logger: s.logger, grace: s.configuration.keyRetireAfter)
            tasks.append(
                PeriodicTask(name: "key-ring", interval: 5, mode: mode, logger: s.logger) {
                    try resealer.pass()
                    return false
                })
        }
        tasks.append(
            PeriodicTask(name: "housekeeping", interval: 600, mode: mode, logger: s.logger) {
                let dialect = s.database.dialect
                let r = try s.transactions.write {
                    try Housekeeping.purge(now: s.clock.now().millis, dialect: dialect, on: $0)
                }
                if let r, r != Housekeeping.Report() {
                    s.logger.log(.info, "housekeeping", ["purged": .string(String(describing: r))])
                }
                return false
            })
        for task in tasks { task.start() }
        let hub = s.hub
        let listener = ChangeFeed.listen(local: s.local, lost: { hub.notifyAll() }, database: s.database)
        s.logger.log(
            .info, "listening",
            [
                "host": .string(s.configuration.http.host), "port": .int(server.port),
                "tls": .bool(s.configuration.http.usesTLS), "dev": .bool(s.configuration.dev),
            ])
        return Runtime(server: server, services: s, tasks: tasks, listener: listener)
    }
}
