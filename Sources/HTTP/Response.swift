import API
import Foundation

/// An HTTP response.
public struct Response: Sendable {
    /// Status code.
    public var status: Int
    /// Header fields in order (names as written).
    public var headers: [(name: String, value: String)]
    /// Body bytes.
    public var body: [UInt8]
    /// Set by `Response.wait`: the request waits for a `LongPollHub.notify`.
    public var deferral: Deferral?

    /// A response with the given parts.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON body.
    public static func json(_ value: some Encodable, status: Int = 200) -> Response {
        if let fast = value as? any FastJSONEncodable {
            return Response(status: status, headers: [("Content-Type", "application/json")], body: Array(fast.fastJSON.utf8))
        }
        // Encoding our own Codable wire models cannot fail.
        let data = (try? WireJSON.sharedEncoder.encode(value)) ?? Data("{}".utf8)
        return Response(status: status, headers: [("Content-Type", "application/json")], body: Array(data))
    }

    /// An `application/problem+json` body.
    public static func problem(_ problem: Problem, headers: [(name: String, value: String)] = []) -> Response {
        let data = (try? WireJSON.sharedEncoder.encode(problem)) ?? Data("{}".utf8)
        return Response(status: problem.status, headers: [("Content-Type", "application/problem+json")] + headers, body: Array(data))
    }

    /// "Nothing yet": wait up to `timeout` seconds for `hub.notify(key)`,
    /// then answer `onTimeout`. No thread waits meanwhile.
    public static func wait(key: String, timeout: TimeInterval, onTimeout: Response) -> Response {
        var r = Response(status: 0)
        r.deferral = Deferral(key: key, timeout: timeout, onTimeout: onTimeout)
        return r
    }

    /// 204 No Content.
    public static let noContent = Response(status: 204)

    /// An HTML page.
    public static func html(_ text: String, status: Int = 200) -> Response {
        Response(status: status, headers: [("Content-Type", "text/html; charset=utf-8")], body: Array(text.utf8))
    }

    /// The value of a header by case-insensitive name.
    public func header(_ name: String) -> String? {
        let wanted = ASCII.lowercased(name)
        return headers.first { ASCII.equalsIgnoringCase($0.name, wanted) }?.value
    }
}
