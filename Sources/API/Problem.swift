/// An RFC 7807 problem document: every error the API returns has this shape,
/// served as `application/problem+json`.
public struct Problem: Codable, Sendable, Equatable {
    /// One invalid field of a request (422).
    public struct InvalidParameter: Codable, Sendable, Equatable {
        /// The field's name as sent on the wire (`email`, `password`, …).
        public var name: String
        /// Why it was refused, as a sentence.
        public var reason: String

        /// A field and the reason it was refused.
        public init(name: String, reason: String) {
            self.name = name
            self.reason = reason
        }
    }

    /// A URI naming the kind of problem: `urn:trifactor:problem:<code>`.
    public var type: String
    /// Short summary of the kind of problem; the same for every occurrence.
    public var title: String
    /// HTTP status code.
    public var status: Int
    /// Explanation of this occurrence, safe to show to a user.
    public var detail: String
    /// Stable machine-readable code (`invalid_credentials`, `rate_limited`, …).
    public var code: ProblemCode
    /// The request id, to find this request in the server log.
    public var requestID: String?
    /// The fields that were refused, for 422.
    public var invalidParams: [InvalidParameter]?
    /// The occurrence (the phone verification API puts the request id here, as Vonage clients expect).
    public var instance: String?
    /// The refused fields in the phone verification API's spelling.
    public var invalidParameters: [InvalidParameter]?
    /// Wrong codes still allowed (the phone-verification API's 400).
    public var remainingAttempts: Int?

    /// A problem; `type` derives from `code`.
    public init(
        status: Int, code: ProblemCode, title: String, detail: String, requestID: String? = nil,
        invalidParams: [InvalidParameter]? = nil
    ) {
        self.type = "urn:trifactor:problem:\(code)"
        self.title = title
        self.status = status
        self.detail = detail
        self.code = code
        self.requestID = requestID
        self.invalidParams = invalidParams
    }

    enum CodingKeys: String, CodingKey {
        case type, title, status, detail, code
        case requestID = "request_id"
        case invalidParams = "invalid_params"
        case instance
        case invalidParameters = "invalid_parameters"
        case remainingAttempts = "remaining_attempts"
    }
}
