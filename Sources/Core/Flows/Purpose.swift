/// What a second-factor proof is for: a code or signature is made for one
/// purpose and accepted for that one only, so a sign-in code cannot approve
/// a transfer. Stored as `signin:<pending hash>`, `stepup:<session id>`,
/// `authz:<authorization id>:<action hash>` or `reset:<reset credential hash>`.
package enum Purpose: Sendable, Equatable {
    /// The second step of the sign-in whose pending credential hashes to this.
    case signIn(pendingHash: String)
    /// A step-up of this session.
    case stepUp(SessionID)
    /// The approval of this authorization, for the action hashing to `actionHash` (hex).
    case authorization(AuthorizationID, actionHash: String)
    /// The password reset whose reset credential hashes to this.
    case passwordReset(resetHash: String)
    /// A client's back-channel authentication request (OpenID CIBA) whose `auth_req_id` hashes to this.
    case backchannel(requestHash: String)

    /// What devices sign as the purpose: `signin`, `stepup`, `authz`.
    package var label: String {
        switch self {
        case .signIn: "signin"
        case .stepUp: "stepup"
        case .authorization: "authz"
        case .passwordReset: "reset"
        case .backchannel: "ciba"
        }
    }

    /// A bound action's hash, signed by device keys and carried in passkey challenges.
    package var actionHash: String? {
        if case .authorization(_, let hash) = self { return hash }
        return nil
    }

    /// The stored form.
    package var key: String {
        switch self {
        case .signIn(let hash): "signin:\(hash)"
        case .stepUp(let session): "stepup:\(session.raw)"
        case .authorization(let id, let hash): "authz:\(id.raw):\(hash)"
        case .passwordReset(let hash): "reset:\(hash)"
        case .backchannel(let hash): "ciba:\(hash)"
        }
    }

    /// The purpose of a stored form (`key`); nil for a form the program does not know.
    package init?(key: String) {
        let parts = key.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        switch (parts.first, parts.count) {
        case ("signin", 2): self = .signIn(pendingHash: parts[1])
        case ("stepup", 2): self = .stepUp(SessionID(parts[1]))
        case ("authz", 3): self = .authorization(AuthorizationID(parts[1]), actionHash: parts[2])
        case ("reset", 2): self = .passwordReset(resetHash: parts[1])
        case ("ciba", 2): self = .backchannel(requestHash: parts[1])
        default: return nil
        }
    }
}
