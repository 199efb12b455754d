import Foundation
import HTTP
import Store

/// Trifactor's HTTP application: every feature's routes over one environment.
public enum Application {
    /// The router with every feature registered.
    public static func router(_ env: Environment) -> Router {
        var router = Router()
        HealthRoutes(env: env).register(on: &router)
        AccountsRoutes(env: env).register(on: &router)
        SessionsRoutes(env: env).register(on: &router)
        DevRoutes(env: env).register(on: &router)
        return router
    }

    /// Opens the database, migrates it, and starts listening.
    /// - Throws: a `StoreError` or `HTTPServerError` whose description is one sentence.
    public static func start(_ configuration: Configuration, logger: Logger = .standardError) throws -> (HTTPServer, Environment) {
        let database = try openDatabase(url: configuration.databaseURL, poolSize: configuration.databasePoolSize)
        let applied = try database.migrate(Schema.migrations)
        if !applied.isEmpty { logger.log("info", "migrated", ["versions": .string(applied.map(String.init).joined(separator: ","))]) }
        let env = try Environment(database: database, configuration: configuration, logger: logger)
        let server = HTTPServer(configuration: configuration.http, router: router(env), logger: logger)
        try server.start()
        Housekeeping.start(env)
        logger.log("info", "listening", ["host": .string(configuration.listenHost), "port": .int(server.port), "dev": .bool(configuration.dev)])
        return (server, env)
    }
}
