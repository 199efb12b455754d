import API
import Foundation

/// An HTTP request, fully read (body assembled from its chunks).
package struct Request: Sendable {
    /// Unique id of this request, echoed in `X-Request-ID` and in problems.
    package let id: String
    /// `GET`, `POST`, …
    package let method: String
    /// The path without query string.
    package let path: String
    /// Query arguments (last value wins).
    package let query: [String: String]
    /// Headers with lower-cased names.
    package let headers: [String: String]
    /// The body bytes.
    package let body: [UInt8]
    /// The client's IP address.
    package let remoteAddress: String
    /// The connection's peer and the `X-Forwarded-For` it sent, as they came, when forwarding headers were
    /// read or dropped (nil: `remoteAddress` is the peer and none came). For the deployment doctor's check.
    package var received: (peer: String, forwardedFor: String?)?
    /// Parameters captured from the route pattern (`:id`).
    package var parameters: [String: String] = [:]
    /// The query string exactly as the client sent it, without the `?`
    /// (empty without one): for signatures over the URL a client called.
    package var rawQuery = ""

    /// A request (the server builds these; tests may too).
    package init(
        id: String, method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:],
        body: [UInt8] = [], remoteAddress: String = "127.0.0.1"
    ) {
        self.id = id
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
    }

    /// A header by case-insensitive name.
    package func header(_ name: String) -> String? { headers[ASCII.lowercased(name)] }

    /// The token of an `Authorization: Bearer …` header.
    package var bearerToken: String? {
        guard let value = headers["authorization"], ASCII.hasPrefix(value, ignoringCase: "bearer ") else { return nil }
        // Spaces around the token are dropped by hand (cheaper than trimmingCharacters on this hot path).
        var token = Substring(value).dropFirst(7)
        while token.first == " " || token.first == "\t" { token.removeFirst() }
        while token.last == " " || token.last == "\t" { token.removeLast() }
        return String(token)
    }
}
