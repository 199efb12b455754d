import API
import HTTP

/// `GET /health` (the process answers) and `GET /ready` (and its database
/// too, as the readiness probe last saw it). Both answer on the HTTP thread.
struct HealthRoutes {
    let probe: ReadinessProbe

    func register(on router: inout Router) {
        router.add("GET", "/health", execution: .inline) { _ in
            .json(HealthStatus(status: "ok", version: TrifactorVersion.current))
        }
        router.add("GET", "/ready", execution: .inline) { _ in
            probe.isReady ? .json(HealthStatus(status: "ok")) : .json(HealthStatus(status: "unavailable"), status: 503)
        }
    }
}
