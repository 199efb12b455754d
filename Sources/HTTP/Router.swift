/// Maps method and path to a handler. Patterns are literal segments and
/// `:name` captures (`/v1/users/:id`). A path that matches some route but not
/// the method answers 405 with `Allow`; no match answers 404.
public struct Router: Sendable {
    /// Handles one request. Throw an `HTTPResponseError` for a problem answer.
    public typealias Handler = @Sendable (Request) throws -> Response

    /// Where a handler runs.
    public enum Execution: Sendable {
        /// On the HTTP thread: fast work only (a few database statements).
        case inline
        /// On the bounded worker pool, the connection suspended meanwhile:
        /// work that is slow by design (Argon2id).
        case worker
    }

    struct Route: Sendable {
        let method: String
        let segments: [Substring]
        let execution: Execution
        let handler: Handler
    }

    private var routes: [Route] = []

    /// An empty router.
    public init() {}

    /// Adds a route.
    public mutating func add(_ method: String, _ pattern: String, execution: Execution = .inline, _ handler: @escaping Handler) {
        routes.append(Route(method: method, segments: pattern.split(separator: "/"), execution: execution, handler: handler))
    }

    enum Match {
        case found(Route, [String: String])
        case methodNotAllowed([String])
        case notFound
    }

    func match(method: String, path: String) -> Match {
        let parts = path.split(separator: "/")
        var allowed: [String] = []
        for route in routes {
            guard let params = Self.capture(route.segments, parts) else { continue }
            if route.method == method || (method == "HEAD" && route.method == "GET") { return .found(route, params) }
            allowed.append(route.method)
            if route.method == "GET" { allowed.append("HEAD") }
        }
        return allowed.isEmpty ? .notFound : .methodNotAllowed(Array(Set(allowed)).sorted())
    }

    private static func capture(_ pattern: [Substring], _ parts: [Substring]) -> [String: String]? {
        guard pattern.count == parts.count else { return nil }
        var params: [String: String] = [:]
        for (p, v) in zip(pattern, parts) {
            if p.hasPrefix(":") {
                params[String(p.dropFirst())] = String(v).removingPercentEncoding ?? String(v)
            } else if p != v {
                return nil
            }
        }
        return params
    }
}

import Foundation
