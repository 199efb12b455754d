/// `POST /v2/verify`: start a phone verification (Vonage Verify v2 wire format).
/// Every field is optional here so that a missing one is reported as a 422
/// naming it, the way Vonage clients expect.
public struct StartVerificationRequest: Codable, Sendable {
    /// One step of the workflow.
    public struct Step: Codable, Sendable {
        /// `sms` or `voice`.
        public var channel: String?
        /// E.164 digits without "+".
        public var to: String?
        /// Sender id for SMS (accepted, used by providers that support it).
        public var from: String?
        public init(channel: String?, to: String?, from: String? = nil) {
            self.channel = channel
            self.to = to
            self.from = from
        }
    }

    public var brand: String?
    public var workflow: [Step]?
    public var locale: String?
    public var channelTimeout: Int?
    public var codeLength: Int?
    public var code: String?
    public var clientRef: String?
    public var fraudCheck: Bool?

    public init(
        brand: String?, workflow: [Step]?, locale: String? = nil, channelTimeout: Int? = nil, codeLength: Int? = nil,
        code: String? = nil, clientRef: String? = nil
    ) {
        self.brand = brand
        self.workflow = workflow
        self.locale = locale
        self.channelTimeout = channelTimeout
        self.codeLength = codeLength
        self.code = code
        self.clientRef = clientRef
    }

    enum CodingKeys: String, CodingKey {
        case brand, workflow, locale, code
        case channelTimeout = "channel_timeout"
        case codeLength = "code_length"
        case clientRef = "client_ref"
        case fraudCheck = "fraud_check"
    }
}

/// 202 answer to a start.
public struct VerificationStarted: Codable, Sendable, Equatable {
    public var requestID: String
    public init(requestID: String) { self.requestID = requestID }
    enum CodingKeys: String, CodingKey { case requestID = "request_id" }
}

/// `POST /v2/verify/{request_id}`.
public struct CheckCodeRequest: Codable, Sendable {
    public var code: String?
    public init(code: String?) { self.code = code }
}

/// 200 answer to a right code.
public struct CodeChecked: Codable, Sendable, Equatable {
    public var requestID: String
    /// Always `completed`.
    public var status: String
    public init(requestID: String) {
        self.requestID = requestID
        status = "completed"
    }
    enum CodingKeys: String, CodingKey {
        case requestID = "request_id"
        case status
    }
}
