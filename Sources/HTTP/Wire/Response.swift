package import API
package import Foundation

/// An HTTP response.
package struct Response: Sendable {
    /// Status code.
    package var status: Int
    /// Header fields in order (names as written).
    package var headers: [(name: String, value: String)]
    /// Body bytes.
    package var body: [UInt8]
    /// Set by `Response.wait`: the request waits for a `LongPollHub.notify`.
    package var deferral: Deferral?
    /// Set when the body could not be encoded: the server answers 500
    /// internal_error instead, and logs this cause.
    package internal(set) var encodingFailure: String?
    /// The route whose counts this answer goes to, set when the request was routed.
    var routeStats: RouteStats?

    /// A response with the given parts.
    package init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON body.
    package static func json(_ value: some Encodable, status: Int = 200) -> Response {
        if let fast = value as? any FastJSONEncodable {
            return Response(
                status: status, headers: [("Content-Type", "application/json")], body: Array(fast.fastJSON.utf8))
        }
        do {
            let data = try WireJSON.sharedEncoder.encode(value)
            return Response(status: status, headers: [("Content-Type", "application/json")], body: Array(data))
        } catch {
            // A value JSON cannot carry (a non-finite number): never answer
            // half a document or an empty one; the server turns this into 500.
            var failed = Response(status: 500)
            failed.encodingFailure = "encoding \(type(of: value)) as JSON failed: \(error)"
            return failed
        }
    }

    /// An `application/problem+json` body.
    package static func problem(_ problem: Problem, headers: [(name: String, value: String)] = []) -> Response {
        let body: [UInt8]
        if let data = try? WireJSON.sharedEncoder.encode(problem) {
            body = Array(data)
        } else {
            // Strings and integers always encode; should that ever change, the
            // answer is still a well-formed problem, not an empty body.
            body = Array(
                #"{"type":"about:blank","title":"Internal Server Error","status":500,"code":"internal_error"}"#.utf8)
        }
        return Response(
            status: problem.status, headers: [("Content-Type", "application/problem+json")] + headers, body: body)
    }

    /// "Nothing yet": wait up to `timeout` seconds for `hub.notify(key)`,
    /// then answer `onTimeout`. No thread waits meanwhile.
    package static func wait(key: String, timeout: TimeInterval, onTimeout: Response) -> Response {
        var r = Response(status: 0)
        r.deferral = Deferral(key: key, timeout: timeout, onTimeout: onTimeout)
        return r
    }

    /// 204 No Content.
    package static let noContent = Response(status: 204)

    /// An HTML page.
    package static func html(_ text: String, status: Int = 200) -> Response {
        Response(status: status, headers: [("Content-Type", "text/html; charset=utf-8")], body: Array(text.utf8))
    }

    /// The value of a header by case-insensitive name.
    package func header(_ name: String) -> String? {
        let wanted = ASCII.lowercased(name)
        return headers.first { ASCII.equalsIgnoringCase($0.name, wanted) }?.value
    }
}
