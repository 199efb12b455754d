public import Foundation

/// A sign-in, password reset, payment or app's request waiting for the device's approval, as the device sees it.
public struct PendingApproval: Codable, Sendable, Equatable {
    public var approvalID: String
    /// Where the sign-in comes from.
    public var ip: String?
    public var userAgent: String?
    public var createdAt: Date
    public var expiresAt: Date
    /// Three numbers: the user picks the one the browser shows.
    public var choices: [Int]
    /// What approving does: `signin` (a sign-in), `reset` (a password reset), `authz` (a payment, with `action`) or
    /// `ciba` (an app's request); a device says which.
    public var purpose: String?
    /// For `ciba` (an app asking on the user's behalf, OpenID CIBA): the app's name and message, shown beside the
    /// numbers ("Bank by phone: Transfer EUR 250.00 to Erika Mustermann"); for `authz`, the app that asks for the
    /// payment and what it is ("Trifactor Bank: Confirm transfer of EUR 250.00 to Erika Mustermann").
    public var message: String?
    /// For `authz` (a payment approved on the device): the action the approval is bound to (a transfer's `amount`,
    /// `currency`, `payee`, `to`, and `from` and `reference` when the payment has them), shown to the user, and its hash (`CanonicalAction.form`, SHA-256, hex),
    /// which the device recomputes from `action` and signs with its decision.
    public var action: [String: JSONScalar]?
    public var actionHash: String?
    public init(
        approvalID: String, ip: String?, userAgent: String?, createdAt: Date, expiresAt: Date, choices: [Int],
        purpose: String? = nil, message: String? = nil, action: [String: JSONScalar]? = nil, actionHash: String? = nil
    ) {
        self.purpose = purpose
        self.message = message
        self.action = action
        self.actionHash = actionHash
        self.approvalID = approvalID
        self.ip = ip
        self.userAgent = userAgent
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.choices = choices
    }
    enum CodingKeys: String, CodingKey {
        case approvalID = "approval_id"
        case ip
        case userAgent = "user_agent"
        case createdAt = "created_at"
        case expiresAt = "expires_at"
        case choices, purpose, message, action
        case actionHash = "action_hash"
    }
}

/// `GET /v1/devices/{id}/approvals`.
public struct PendingApprovals: Codable, Sendable, Equatable {
    public var approvals: [PendingApproval]
    public init(approvals: [PendingApproval]) { self.approvals = approvals }
}

/// `POST /v1/devices/{id}/approvals/{approval_id}`: signed by the device over
/// purpose `push`, challenge = the approval id, action = `<decision>:<number>`, and for an approval bound to an
/// action (`action_hash`), `<decision>:<number>:<action hash>`.
public struct ApprovalDecision: Codable, Sendable {
    /// `approve` or `deny`.
    public var decision: String
    public var number: Int
    public var signature: String
    public init(decision: String, number: Int, signature: String) {
        self.decision = decision
        self.number = number
        self.signature = signature
    }
}

/// The state of a push approval: `pending`, `approved`, `denied` or `expired`.
public struct ApprovalState: Codable, Sendable, Equatable {
    public var status: String
    public init(status: String) { self.status = status }
}

/// `POST /v1/sessions/push`: passwordless sign-in approved on the phone.
public struct PushSignInRequest: Codable, Sendable {
    public var email: String
    public init(email: String) { self.email = email }
}

/// 202 answer: show `number`; poll the approval; then complete.
public struct PushSignInStarted: Codable, Sendable, Equatable {
    public var pendingCredential: String
    public var approvalID: String
    public var number: Int
    public init(pendingCredential: String, approvalID: String, number: Int) {
        self.pendingCredential = pendingCredential
        self.approvalID = approvalID
        self.number = number
    }
    enum CodingKeys: String, CodingKey {
        case pendingCredential = "pending_credential"
        case approvalID = "approval_id"
        case number
    }
}

/// `POST /v1/sessions/push/complete`.
public struct PushSignInComplete: Codable, Sendable {
    public var pendingCredential: String
    public var approvalID: String
    public init(pendingCredential: String, approvalID: String) {
        self.pendingCredential = pendingCredential
        self.approvalID = approvalID
    }
    enum CodingKeys: String, CodingKey {
        case pendingCredential = "pending_credential"
        case approvalID = "approval_id"
    }
}
