import API
import HTTP

/// `GET /health` (the process answers) and `GET /ready` (and its database too).
struct HealthRoutes {
    let env: Environment

    func register(on router: inout Router) {
        router.add("GET", "/health") { _ in .json(HealthStatus(status: "ok")) }
        router.add("GET", "/ready") { _ in
            do {
                try env.database.ping()
                return .json(HealthStatus(status: "ok"))
            } catch {
                env.logger.log("error", "readiness_failed", ["error": .string(String(reflecting: error))])
                return .json(HealthStatus(status: "unavailable"), status: 503)
            }
        }
    }
}
