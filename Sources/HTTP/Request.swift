import API
import Foundation

/// An HTTP request, fully read (body assembled from its chunks).
public struct Request: Sendable {
    /// Unique id of this request, echoed in `X-Request-ID` and in problems.
    public let id: String
    /// `GET`, `POST`, …
    public let method: String
    /// The path without query string.
    public let path: String
    /// Query arguments (last value wins).
    public let query: [String: String]
    /// Headers with lower-cased names.
    public let headers: [String: String]
    /// The body bytes.
    public let body: [UInt8]
    /// The client's IP address.
    public let remoteAddress: String
    /// Parameters captured from the route pattern (`:id`).
    public var parameters: [String: String] = [:]
    /// The query string exactly as the client sent it, without the `?`
    /// (empty without one): for signatures over the URL a client called.
    public var rawQuery = ""

    /// A request (the server builds these; tests may too).
    public init(id: String, method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:], body: [UInt8] = [], remoteAddress: String = "127.0.0.1") {
        self.id = id
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
    }

    /// A header by case-insensitive name.
    public func header(_ name: String) -> String? { headers[ASCII.lowercased(name)] }

    /// The token of an `Authorization: Bearer …` header.
    public var bearerToken: String? {
        guard let value = headers["authorization"], ASCII.hasPrefix(value, ignoringCase: "bearer ") else { return nil }
        // Spaces around the token are dropped by hand (cheaper than trimmingCharacters on this hot path).
        var token = Substring(value).dropFirst(7)
        while token.first == " " || token.first == "\t" { token.removeFirst() }
        while token.last == " " || token.last == "\t" { token.removeLast() }
        return String(token)
    }
}
