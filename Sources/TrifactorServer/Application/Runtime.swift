package import Foundation
package import HTTP
package import Store

/// A running Trifactor: the HTTP server and its background work.
package final class Runtime: Sendable {
    package let server: HTTPServer
    package let services: Services
    let tasks: [PeriodicTask]
    let listener: (any DatabaseListener)?

    init(server: HTTPServer, services: Services, tasks: [PeriodicTask], listener: (any DatabaseListener)?) {
        self.server = server
        self.services = services
        self.tasks = tasks
        self.listener = listener
    }

    /// The database it serves.
    package var database: any Database { services.database }

    /// Runs one pass of every background loop now (tests drive them this way).
    package func tick() {
        for task in tasks { task.tick() }
    }

    /// Stops taking requests, finishes those in flight, then stops delivering and listening.
    package func stop(drainTimeout: TimeInterval) {
        server.stop(drainTimeout: drainTimeout)
        for task in tasks { task.stop() }
        listener?.stop()
    }
}
