package import API

/// An error that knows how it reads on the wire. Handlers throw errors that
/// conform; anything else becomes a 500 that leaks nothing.
package protocol HTTPResponseError: Error {
    /// HTTP status.
    var status: Int { get }
    /// Stable machine-readable code.
    var code: ProblemCode { get }
    /// Summary of the kind of problem.
    var title: String { get }
    /// Explanation of this occurrence, safe to show.
    var detail: String { get }
    /// Fields refused (422), if any.
    var invalidParams: [Problem.InvalidParameter]? { get }
    /// Extra headers, such as `Retry-After`.
    var headers: [(name: String, value: String)] { get }
    /// The problem document for this error in the request `requestID`
    /// (a default builds it from the fields above).
    func problem(requestID: String) -> Problem
}

extension HTTPResponseError {
    package var invalidParams: [Problem.InvalidParameter]? { nil }
    package var headers: [(name: String, value: String)] { [] }

    /// The problem document for this error in the request `requestID`.
    package func problem(requestID: String) -> Problem {
        Problem(
            status: status, code: code, title: title, detail: detail, requestID: requestID, invalidParams: invalidParams
        )
    }
}

/// The protocol-level problems the HTTP layer itself raises. Their codes are
/// part of the API: never rename one.
package struct HTTPProblem: HTTPResponseError, Sendable {
    package let status: Int
    package let code: ProblemCode
    package let title: String
    package let detail: String
    package let invalidParams: [Problem.InvalidParameter]?
    package let headers: [(name: String, value: String)]

    /// A problem with every field given.
    package init(
        status: Int, code: ProblemCode, title: String, detail: String, invalidParams: [Problem.InvalidParameter]? = nil,
        headers: [(name: String, value: String)] = []
    ) {
        self.status = status
        self.code = code
        self.title = title
        self.detail = detail
        self.invalidParams = invalidParams
        self.headers = headers
    }

    package static let notFound = HTTPProblem(
        status: 404, code: .notFound, title: "Not Found", detail: "There is nothing at this path.")
    package static func methodNotAllowed(allowed: [String]) -> HTTPProblem {
        HTTPProblem(
            status: 405, code: .methodNotAllowed, title: "Method Not Allowed",
            detail: "This path accepts \(allowed.joined(separator: ", ")).",
            headers: [("Allow", allowed.joined(separator: ", "))])
    }
    /// A request whose head breaks HTTP/1.1's framing rules; the connection is closed after it.
    package static func malformedRequest(_ detail: String) -> HTTPProblem {
        HTTPProblem(
            status: 400, code: .malformedRequest, title: "Bad Request", detail: detail,
            headers: [("Connection", "close")])
    }
    package static let uriTooLong = HTTPProblem(
        status: 414, code: .uriTooLong, title: "URI Too Long",
        detail:
            "The request target is longer than \(RequestHead.maximumTargetBytes) bytes or has more than \(RequestHead.maximumQueryArguments) query arguments.",
        headers: [("Connection", "close")])
    package static let transferCodingNotImplemented = HTTPProblem(
        status: 501, code: .transferCodingNotImplemented, title: "Not Implemented",
        detail: "Only the chunked transfer coding is accepted.", headers: [("Connection", "close")])
    package static let malformedJSON = HTTPProblem(
        status: 400, code: .malformedJson, title: "Malformed JSON", detail: "The request body is not well-formed JSON.")
    package static func payloadTooLarge(limit: Int) -> HTTPProblem {
        HTTPProblem(
            status: 413, code: .payloadTooLarge, title: "Payload Too Large",
            detail: "The request body is larger than \(limit) bytes.")
    }
    package static let unsupportedMediaType = HTTPProblem(
        status: 415, code: .unsupportedMediaType, title: "Unsupported Media Type",
        detail: "Send the body as application/json.")
    package static func invalidFields(_ fields: [Problem.InvalidParameter]) -> HTTPProblem {
        let names = fields.map(\.name).joined(separator: ", ")
        return HTTPProblem(
            status: 422, code: .invalidFields, title: "Invalid Fields", detail: "These fields are invalid: \(names).",
            invalidParams: fields)
    }
    package static let overloaded = HTTPProblem(
        status: 503, code: .overloaded, title: "Service Unavailable",
        detail: "The server is busy: try again in a moment.", headers: [("Retry-After", "1")])
    package static let internalError = HTTPProblem(
        status: 500, code: .internalError, title: "Internal Server Error",
        detail: "Something went wrong on our side. Quote the request id if you report it.")
}
