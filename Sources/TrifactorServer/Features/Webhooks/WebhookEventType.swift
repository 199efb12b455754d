import Core

/// The events a webhook endpoint can ask for: the names receivers see in
/// `type`. They are part of the API: never rename one. Each is derived from
/// an audit log kind, so an event is announced exactly when it is recorded
/// (in the same transaction), and from nothing else.
enum WebhookEventType: String, Sendable, CaseIterable {
    case userSignedIn = "user.signed_in"
    case userSignInFailed = "user.sign_in_failed"
    case userLockedOut = "user.locked_out"
    case factorEnrolled = "factor.enrolled"
    case factorRemoved = "factor.removed"
    case factorsReset = "factors.reset"
    case passwordChanged = "password.changed"
    case userCreated = "user.created"
    case userDisabled = "user.disabled"
    case userDeleted = "user.deleted"
    case phoneVerificationCompleted = "phone_verification.completed"
    case deliveryFailed = "delivery.failed"
    case adminKeyCreated = "admin_key.created"
    case adminKeyRevoked = "admin_key.revoked"

    /// What an endpoint lists to receive every type, those added later included.
    static let wildcard = "*"

    /// The type an audit entry of `kind` is announced as, or nil for the kinds no webhook announces.
    init?(audit kind: AuditEventKind) {
        switch kind {
        case .signInSucceeded: self = .userSignedIn
        case .signInFailed: self = .userSignInFailed
        // Locked out of the password (too many wrong ones) or of the second step (a hundred wrong proofs).
        case .signInLocked, .mfaFrozen: self = .userLockedOut
        case .mfaEnrolled: self = .factorEnrolled
        case .mfaRemoved: self = .factorRemoved
        case .adminMFAReset: self = .factorsReset
        // Changed while signed in, or set again after a forgotten password.
        case .passwordChanged, .passwordReset, .reportedNotMe: self = .passwordChanged
        case .accountCreated: self = .userCreated
        case .adminUserDisabled: self = .userDisabled
        case .adminUserDeleted: self = .userDeleted
        case .verifyCompleted: self = .phoneVerificationCompleted
        case .deliveryFailed: self = .deliveryFailed
        case .adminKeyCreated: self = .adminKeyCreated
        case .adminKeyRevoked: self = .adminKeyRevoked
        default: return nil
        }
    }

    /// The types named by a comma- or space-separated list; `*` stands for every type.
    /// - Throws: `CommonFailure.invalidFields` naming `field` for an unknown type or an empty list.
    static func parse(_ text: String, field: String = "event_types") throws -> [String] {
        let names = text.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
        return try check(names, field: field)
    }

    /// `names` checked and without repeats, in their order.
    /// - Throws: `CommonFailure.invalidFields` naming `field` for an unknown type or an empty list.
    static func check(_ names: [String], field: String = "event_types") throws -> [String] {
        guard !names.isEmpty else {
            throw CommonFailure.invalid(field, "must name at least one event type, or * for all of them")
        }
        var seen: [String] = []
        for name in names where !seen.contains(name) {
            guard name == wildcard || WebhookEventType(rawValue: name) != nil else {
                throw CommonFailure.invalid(
                    field, "\(name) is not an event type: use * or \(allCases.map(\.rawValue).joined(separator: ", "))")
            }
            seen.append(name)
        }
        return seen
    }
}
