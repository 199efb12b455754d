import Foundation

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
    enum CodingKeys: String, CodingKey { case id, aal, methods, createdAt = "created_at", expiresAt = "expires_at" }
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
