import Foundation
import Synchronization
import TrifactorKit

/// Where a bank session keeps its customer's Trifactor token: in this
/// process's memory only. Unlike `MemorySecretStore` it says without a
/// call whether a token is held: TrifactorKit forgets the token when
/// Trifactor says the session ended (`unauthenticated`,
/// `session_expired`), so an empty store means the customer was signed out
/// elsewhere, whichever call found out.
final class SessionSecrets: SecretStore {
    private let items = Mutex<[String: Data]>([:])

    /// Whether a token (any item) is held now.
    var holdsToken: Bool { items.withLock { !$0.isEmpty } }

    func set(_ value: Data, for key: String, protection: ItemProtection) async throws(SecretStoreError) {
        items.withLock { $0[key] = value }
    }

    func get(_ key: String, prompt: String?) async throws(SecretStoreError) -> Data? { items.withLock { $0[key] } }

    func contains(_ key: String) async throws(SecretStoreError) -> Bool { items.withLock { $0[key] != nil } }

    func remove(_ key: String) async throws(SecretStoreError) { _ = items.withLock { $0.removeValue(forKey: key) } }
}
