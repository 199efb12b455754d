import Core

// The flows' states, kept in TEXT columns by their raw strings.
extension ApprovalStatus: StoredValue {}
extension AuthorizationState: StoredValue {}
extension SessionEndReason: StoredValue {}
extension OutboxStatus: StoredValue {}
