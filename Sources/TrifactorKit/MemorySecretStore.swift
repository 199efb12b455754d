public import Foundation

/// Secrets in this process's memory only: gone when it ends. The default of
/// `TrifactorClient` for a server-side Swift service that signs in per run,
/// and a base for tests. Items with presence protection are read without a
/// prompt: use a real store where that matters.
public final class MemorySecretStore: SecretStore {
    private let items = Locked<[String: Data]>([:])

    public init() {}

    public func set(_ value: Data, for key: String, protection: ItemProtection) async throws(SecretStoreError) {
        items.withLock { $0[key] = value }
    }

    public func get(_ key: String, prompt: String?) async throws(SecretStoreError) -> Data? {
        items.withLock { $0[key] }
    }

    public func contains(_ key: String) async throws(SecretStoreError) -> Bool { items.withLock { $0[key] != nil } }

    public func remove(_ key: String) async throws(SecretStoreError) { items.withLock { $0[key] = nil } }
}
