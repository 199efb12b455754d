public import Foundation

/// One account as the admin API lists it (`GET /admin/v1/users?…`).
public struct AdminUserSummary: Codable, Sendable, Equatable {
    public var id: String
    public var email: String
    public var displayName: String?
    public var emailVerified: Bool
    public var disabled: Bool
    public var createdAt: Date
    public init(id: String, email: String, displayName: String?, emailVerified: Bool, disabled: Bool, createdAt: Date) {
        self.id = id
        self.email = email
        self.displayName = displayName
        self.emailVerified = emailVerified
        self.disabled = disabled
        self.createdAt = createdAt
    }
    enum CodingKeys: String, CodingKey {
        case id, email, disabled
        case displayName = "display_name"
        case emailVerified = "email_verified"
        case createdAt = "created_at"
    }
}

/// `GET /admin/v1/users?email=|id=|phone=`.
public struct AdminUserList: Codable, Sendable, Equatable {
    public var users: [AdminUserSummary]
    public init(users: [AdminUserSummary]) { self.users = users }
}

/// One live session of a user, as an administrator sees it.
public struct AdminSession: Codable, Sendable, Equatable {
    public var id: String
    public var aal: Int
    public var methods: [String]
    public var createdAt: Date
    public var lastSeenAt: Date
    public var ip: String?
    public var userAgent: String?
    public init(
        id: String, aal: Int, methods: [String], createdAt: Date, lastSeenAt: Date, ip: String?, userAgent: String?
    ) {
        self.id = id
        self.aal = aal
        self.methods = methods
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt
        self.ip = ip
        self.userAgent = userAgent
    }
    enum CodingKeys: String, CodingKey {
        case id, aal, methods, ip
        case createdAt = "created_at"
        case lastSeenAt = "last_seen_at"
        case userAgent = "user_agent"
    }
}

/// `GET /admin/v1/users/{id}`: the account with its second factors, device keys, passkeys and live sessions.
public struct AdminUser: Codable, Sendable, Equatable {
    public var user: AdminUserSummary
    public var locale: String?
    public var factors: [EnrolledFactor]
    public var devices: [EnrolledFactor]
    public var passkeys: [EnrolledFactor]
    public var sessions: [AdminSession]
    public init(
        user: AdminUserSummary, locale: String?, factors: [EnrolledFactor], devices: [EnrolledFactor],
        passkeys: [EnrolledFactor],
        sessions: [AdminSession]
    ) {
        self.user = user
        self.locale = locale
        self.factors = factors
        self.devices = devices
        self.passkeys = passkeys
        self.sessions = sessions
    }
}

/// What an admin write changed.
public struct AdminActionResult: Codable, Sendable, Equatable {
    public var userID: String
    public var action: String
    /// Sessions ended by it.
    public var sessionsEnded: Int
    /// Second factors removed by it.
    public var factorsRemoved: Int
    public init(userID: String, action: String, sessionsEnded: Int = 0, factorsRemoved: Int = 0) {
        self.userID = userID
        self.action = action
        self.sessionsEnded = sessionsEnded
        self.factorsRemoved = factorsRemoved
    }
    enum CodingKeys: String, CodingKey {
        case action
        case userID = "user_id"
        case sessionsEnded = "sessions_ended"
        case factorsRemoved = "factors_removed"
    }
}

/// One audit log entry (`GET /admin/v1/audit`).
public struct AdminAuditEntry: Codable, Sendable, Equatable {
    public var seq: Int64
    public var at: Date
    public var kind: String
    public var outcome: String
    public var userID: String?
    public var ip: String?
    public var userAgent: String?
    public var detail: String?
    public init(
        seq: Int64, at: Date, kind: String, outcome: String, userID: String?, ip: String?, userAgent: String?,
        detail: String?
    ) {
        self.seq = seq
        self.at = at
        self.kind = kind
        self.outcome = outcome
        self.userID = userID
        self.ip = ip
        self.userAgent = userAgent
        self.detail = detail
    }
    enum CodingKeys: String, CodingKey {
        case seq, at, kind, outcome, ip, detail
        case userID = "user_id"
        case userAgent = "user_agent"
    }
}

/// `GET /admin/v1/audit?…`: entries oldest first, and the `seq` to pass as `after` for the next page (nil: no more).
public struct AdminAuditPage: Codable, Sendable, Equatable {
    public var entries: [AdminAuditEntry]
    public var next: Int64?
    public init(entries: [AdminAuditEntry], next: Int64?) {
        self.entries = entries
        self.next = next
    }
}

/// A test number: starts to it never send, and its code is fixed (`GET /admin/v1/test-numbers`).
public struct AdminTestNumber: Codable, Sendable, Equatable {
    public var number: String
    public var code: String
    /// `configuration` (TRIFACTOR_TEST_NUMBERS, read-only here) or `admin`.
    public var source: String
    public var createdAt: Date?
    public init(number: String, code: String, source: String, createdAt: Date?) {
        self.number = number
        self.code = code
        self.source = source
        self.createdAt = createdAt
    }
    enum CodingKeys: String, CodingKey {
        case number, code, source
        case createdAt = "created_at"
    }
}

/// `GET /admin/v1/test-numbers`.
public struct AdminTestNumbers: Codable, Sendable, Equatable {
    public var testNumbers: [AdminTestNumber]
    public init(testNumbers: [AdminTestNumber]) { self.testNumbers = testNumbers }
    enum CodingKeys: String, CodingKey { case testNumbers = "test_numbers" }
}

/// `PUT /admin/v1/test-numbers/{number}`.
public struct AdminTestNumberRequest: Codable, Sendable {
    public var code: String
    public init(code: String) { self.code = code }
}
