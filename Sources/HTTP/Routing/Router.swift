import Foundation

/// Maps method and path to a handler. Patterns are literal segments and
/// `:name` captures (`/v1/users/:id`). A path that matches some route but not
/// the method answers 405 with `Allow`; no match answers 404.
package struct Router: Sendable {
    /// Handles one request. Throw an `HTTPResponseError` for a problem answer.
    package typealias Handler = @Sendable (Request) throws -> Response

    /// A handler that answers from memory on the HTTP thread, or returns nil
    /// to send the request on to the route's executor.
    package typealias FastHandler = @Sendable (Request) throws -> Response?

    /// Where a handler runs. The connection is suspended while a handler
    /// runs anywhere but inline, so no HTTP thread ever waits.
    package enum Execution: Sendable {
        /// On the HTTP thread: pure work only (no database, no file, no lock
        /// that can be held long). In debug builds, taking a database
        /// connection there is a precondition failure.
        case inline
        /// On the bounded database executor: every handler that touches the store.
        case database
        /// On the password-hashing pool: work that is slow by design (Argon2id).
        case hashing
    }

    struct Route: Sendable {
        let method: String
        let pattern: String
        let segments: [Substring]
        let execution: Execution
        let fast: FastHandler?
        let handler: Handler
        let stats: RouteStats
    }

    /// Requests no route matched (404) or whose method none has (405), whatever their path.
    let unmatched = RouteStats(route: "unmatched", method: "other")

    /// Every route's request counts and latencies, the unmatched ones last.
    var stats: [RouteStats] { routes.map(\.stats) + [unmatched] }

    private var routes: [Route] = []
    /// Routes without captures, by their path (`/v1/session`): the usual
    /// request finds its route with one lookup instead of a scan.
    private var literal: [String: [Route]] = [:]

    /// An empty router.
    package init() {}

    /// Adds a route; its handler runs on the database executor unless said otherwise.
    package mutating func add(
        _ method: String, _ pattern: String, execution: Execution = .database, _ handler: @escaping Handler
    ) {
        append(
            Route(
                method: method, pattern: pattern, segments: pattern.split(separator: "/"), execution: execution,
                fast: nil, handler: handler,
                stats: RouteStats(route: pattern, method: method)))
    }

    /// Adds a route with a fast path: `fast` runs on the HTTP thread and
    /// answers from memory when it can; when it returns nil, `handler` runs
    /// on the database executor.
    package mutating func add(
        _ method: String, _ pattern: String, fast: @escaping FastHandler, _ handler: @escaping Handler
    ) {
        append(
            Route(
                method: method, pattern: pattern, segments: pattern.split(separator: "/"), execution: .database,
                fast: fast, handler: handler,
                stats: RouteStats(route: pattern, method: method)))
    }

    /// Every route as registered (`GET`, `/v1/users/:id`), in order: what
    /// the API contract must describe.
    package var table: [(method: String, pattern: String)] { routes.map { ($0.method, $0.pattern) } }

    private mutating func append(_ route: Route) {
        routes.append(route)
        if !route.segments.contains(where: { $0.hasPrefix(":") }) {
            literal["/" + route.segments.joined(separator: "/"), default: []].append(route)
        }
    }

    enum Match {
        case found(Route, [String: String])
        case methodNotAllowed([String])
        case notFound
    }

    func match(method: String, path: String) -> Match {
        if let route = literal[path]?.first(where: { $0.method == method }) { return .found(route, [:]) }
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
