import Core
import Store
import Synchronization

/// What other features do, in the same transaction, when a user ends a
/// session (signs out, or revokes one from their list): the OpenID Provider
/// revokes the grants that lived on it and queues back-channel logout
/// tokens. Registered once at start-up, so the sessions feature never
/// reaches into another feature's tables.
final class SessionEndHooks: Sendable {
    typealias Hook = @Sendable (_ session: SessionID, _ user: UserID, _ now: Int64, any SQLConnection) throws -> Void
    private let hooks = Mutex<[Hook]>([])

    init() {}

    func add(_ hook: @escaping Hook) { hooks.withLock { $0.append(hook) } }

    func run(_ session: SessionID, user: UserID, now: Int64, on db: any SQLConnection) throws {
        for hook in hooks.withLock({ $0 }) { try hook(session, user, now, db) }
    }
}
