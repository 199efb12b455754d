public import Foundation

/// `POST /v1/sessions`.
public struct CreateSessionRequest: Codable, Sendable {
    public var email: String
    public var password: String
    public init(email: String, password: String) {
        self.email = email
        self.password = password
    }
}

/// A session as the API shows it (never its token).
public struct SessionInfo: Codable, Sendable, Equatable {
    public var id: String
    /// Authenticator assurance level: 1 (password) or 2 (two factors).
    public var aal: Int
    /// Methods used (RFC 8176 names): `pwd`, …
    public var methods: [String]
    public var createdAt: Date
    /// When the session ends if it is not used again (idle timeout or
    /// absolute lifetime, whichever comes first).
    public var expiresAt: Date
    public init(id: String, aal: Int, methods: [String], createdAt: Date, expiresAt: Date) {
        self.id = id
        self.aal = aal
        self.methods = methods
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
    enum CodingKeys: String, CodingKey {
        case id, aal, methods
        case createdAt = "created_at"
        case expiresAt = "expires_at"
    }
}

/// The answer to a successful sign-in: the token is shown only here.
public struct SessionCreated: Codable, Sendable {
    public var token: String
    public var session: SessionInfo
    public init(token: String, session: SessionInfo) {
        self.token = token
        self.session = session
    }
}

/// `GET /v1/session`.
public struct CurrentSession: Codable, Sendable, Equatable {
    public var session: SessionInfo
    public var user: UserInfo
    public init(session: SessionInfo, user: UserInfo) {
        self.session = session
        self.user = user
    }
}

/// One of the user's sessions, as `GET /v1/sessions` lists them.
public struct SessionSummary: Codable, Sendable, Equatable {
    public var id: String
    public var aal: Int
    public var methods: [String]
    public var createdAt: Date
    public var lastSeenAt: Date
    public var ip: String?
    public var userAgent: String?
    /// True for the session making the request.
    public var current: Bool
    /// The device key that proved the second factor, if one did.
    public var deviceID: String?
    /// The browser and system as people read them ("Chrome on Linux"), from the user agent.
    public var device: String?
    public init(
        id: String, aal: Int, methods: [String], createdAt: Date, lastSeenAt: Date, ip: String?, userAgent: String?,
        current: Bool,
        deviceID: String? = nil, device: String? = nil
    ) {
        self.deviceID = deviceID
        self.device = device
        self.id = id
        self.aal = aal
        self.methods = methods
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt
        self.ip = ip
        self.userAgent = userAgent
        self.current = current
    }
    enum CodingKeys: String, CodingKey {
        case id, aal, methods
        case createdAt = "created_at"
        case lastSeenAt = "last_seen_at"
        case ip
        case userAgent = "user_agent"
        case current
        case deviceID = "device_id"
        case
            device
    }
}

/// `GET /v1/sessions`.
public struct SessionList: Codable, Sendable, Equatable {
    public var sessions: [SessionSummary]
    /// Where the next page starts (`GET /v1/sessions?after=…`); absent on the last page.
    public var next: String?
    public init(sessions: [SessionSummary], next: String? = nil) {
        self.sessions = sessions
        self.next = next
    }
}

/// `POST /v1/authorizations`: describe a sensitive action and pick the factor that confirms it.
/// `POST /v1/authorizations/{id}/consume`: the action the relying party is about to carry out.
public struct ConsumeAuthorizationRequest: Codable, Sendable {
    public var action: [String: JSONScalar]
    public init(action: [String: JSONScalar]) { self.action = action }
}

public struct CreateAuthorizationRequest: Codable, Sendable {
    /// `{type: "transfer", amount: "250.00", currency: "EUR", payee: "Alice Example", source: "…"}`: any JSON object with a `type`.
    public var action: [String: JSONScalar]
    public var enrollmentID: String
    public init(action: [String: JSONScalar], enrollmentID: String) {
        self.action = action
        self.enrollmentID = enrollmentID
    }
    enum CodingKeys: String, CodingKey {
        case action
        case enrollmentID = "enrollment_id"
    }
}

/// A string, number or boolean field of an action.
public enum JSONScalar: Codable, Sendable, Equatable {
    case string(String)
    case number(Double)
    case bool(Bool)

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let d = try? c.decode(Double.self) {
            self = .number(d)
        } else {
            self = .string(try c.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .string(let s): try c.encode(s)
        case .number(let d): try c.encode(d)
        case .bool(let b): try c.encode(b)
        }
    }

    /// The text form used for the canonical hash and the summary.
    public var text: String {
        switch self {
        case .string(let s): s
        case .number(let d): d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d)
        case .bool(let b): b ? "true" : "false"
        }
    }
}

/// A bound action's canonical form, which the server hashes (SHA-256, hex) and a device recomputes before it signs a
/// payment it shows: fields sorted by name, each as its name's length and name, a type tag (`s`, `n`, `b`), and its
/// text's length and text, so no two different actions (nor "250" and 250) share a form. Lengths count UTF-8 bytes.
public enum CanonicalAction {
    public static func form(_ action: [String: JSONScalar]) -> String {
        var form = ""
        for key in action.keys.sorted() {
            guard let value = action[key] else { continue }
            let tag =
                switch value {
                case .string: "s"
                case .number: "n"
                case .bool: "b"
                }
            form += "\(key.utf8.count):\(key)\(tag)\(value.text.utf8.count):\(value.text);"
        }
        return form
    }
}

/// 202 answer: the challenge is on its way.
public struct AuthorizationCreated: Codable, Sendable, Equatable {
    public var authorizationID: String
    /// What the user is asked to confirm.
    public var summary: String
    /// For a device key: what it must sign (with `action_hash`).
    public var challenge: String?
    public var actionHash: String?
    /// For a passkey: the options for `navigator.credentials.get` (the challenge covers the action).
    public var options: RequestOptions?
    public init(authorizationID: String, summary: String, challenge: String? = nil, actionHash: String? = nil) {
        self.authorizationID = authorizationID
        self.summary = summary
        self.challenge = challenge
        self.actionHash = actionHash
    }
    enum CodingKeys: String, CodingKey {
        case authorizationID = "authorization_id"
        case summary, challenge
        case actionHash = "action_hash"
        case options
    }
}

/// `POST /v1/authorizations/{id}` and its answer.
public struct ApproveAuthorizationRequest: Codable, Sendable {
    public var code: String?
    /// A passkey's assertion instead of a code.
    public var assertion: CredentialJSON?
    public init(code: String? = nil, assertion: CredentialJSON? = nil) {
        self.code = code
        self.assertion = assertion
    }
}

public struct AuthorizationStatus: Codable, Sendable, Equatable {
    /// `approved`.
    public var status: String
    public init(status: String) { self.status = status }
}
