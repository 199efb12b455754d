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
    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// The token of an `Authorization: Bearer …` header.
    public var bearerToken: String? {
        guard let value = header("authorization") else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        // Spaces around the token are dropped by hand (cheaper than trimmingCharacters on this hot path).
        var token = parts[1]
        while token.first == " " || token.first == "\t" { token.removeFirst() }
        while token.last == " " || token.last == "\t" { token.removeLast() }
        return String(token)
    }

    /// Decodes the JSON body into `T`.
    /// - Throws: `HTTPProblem` 415 when the body is not declared as JSON, 400
    ///   when it is not well-formed JSON, 422 naming the field when a field is
    ///   missing or of the wrong type.
    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let contentType = header("content-type")?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard contentType == "application/json" else {
            throw HTTPProblem.unsupportedMediaType
        }
        do {
            return try WireJSON.sharedDecoder.decode(T.self, from: Data(body))
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
            // Not JSON at all (rather than a field of the wrong shape).
            throw HTTPProblem.malformedJSON
        } catch let error as DecodingError {
            throw HTTPProblem.invalidFields(Self.invalidParameters(error))
        }
    }

    private static func invalidParameters(_ error: DecodingError) -> [Problem.InvalidParameter] {
        func name(_ path: [any CodingKey], _ key: (any CodingKey)? = nil) -> String {
            let keys = path + (key.map { [$0] } ?? [])
            return keys.isEmpty ? "body" : keys.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return [.init(name: name(context.codingPath, key), reason: "is required")]
        case .typeMismatch(let type, let context):
            return [.init(name: name(context.codingPath), reason: "must be \(describe(type))")]
        case .valueNotFound(let type, let context):
            return [.init(name: name(context.codingPath), reason: "must be \(describe(type)), not null")]
        case .dataCorrupted(let context):
            return [.init(name: name(context.codingPath), reason: "is not valid")]
        @unknown default:
            return [.init(name: "body", reason: "is not valid")]
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type: "an integer"
        case is Bool.Type: "a boolean"
        case is Double.Type: "a number"
        default: "an object of the documented shape"
        }
    }
}
