#if canImport(Security) && canImport(LocalAuthentication)
import Foundation
import LocalAuthentication
import Security

/// `SecretStore` on Apple platforms: generic-password Keychain items
/// (`kSecClassGenericPassword`) with a service, the key as account, and an
/// optional access group. Session tokens are `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`;
/// gated items carry `SecAccessControl` with `.userPresence` or `.biometryCurrentSet`.
/// A cancelled prompt throws `.presence(.userCancel)`, never nil; a gated
/// item that vanished because the enrolled biometrics changed throws
/// `.presence(.keyInvalidated)` (an ungated marker item remembers that it
/// existed). Items live in the data-protection keychain on macOS too.
/// Compiled on Apple platforms only.
public struct KeychainSecretStore: SecretStore {
    public let service: String
    public let accessGroup: String?

    public init(service: String, accessGroup: String? = nil) {
        self.service = service
        self.accessGroup = accessGroup
    }

    private func query(_ key: String) -> [String: Any] {
        var q: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: key,
                                kSecUseDataProtectionKeychain as String: true]
        if let accessGroup { q[kSecAttrAccessGroup as String] = accessGroup }
        return q
    }

    private func marker(_ key: String) -> String { "\(key).gated" }

    public func set(_ value: Data, for key: String, protection: ItemProtection) async throws(SecretStoreError) {
        var attributes: [String: Any] = [kSecValueData as String: value]
        switch protection {
        case .afterFirstUnlockThisDeviceOnly:
            attributes[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        case .userPresence, .biometryCurrentSet:
            let flags: SecAccessControlCreateFlags = protection == .userPresence ? .userPresence : .biometryCurrentSet
            guard let access = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, flags, nil) else {
                throw .unexpected(status: errSecParam)
            }
            attributes[kSecAttrAccessControl as String] = access
        }
        // Add first; replace in place only if it exists, so a failed write never loses the old value.
        var status = SecItemAdd(query(key).merging(attributes) { $1 } as CFDictionary, nil)
        if status == errSecDuplicateItem { status = SecItemUpdate(query(key) as CFDictionary, attributes as CFDictionary) }
        guard status == errSecSuccess else { throw Self.error(status) }
        if protection != .afterFirstUnlockThisDeviceOnly {
            let mark = query(marker(key)).merging([kSecValueData as String: Data([1]),
                                                   kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly]) { $1 }
            let marked = SecItemAdd(mark as CFDictionary, nil)
            guard marked == errSecSuccess || marked == errSecDuplicateItem else { throw Self.error(marked) }
        }
    }

    public func get(_ key: String, prompt: String?) async throws(SecretStoreError) -> Data? {
        var q = query(key)
        q[kSecReturnData as String] = true
        q[kSecMatchLimit as String] = kSecMatchLimitOne
        let context = LAContext()  // fresh per read: a prompt is never skipped by a reused context
        if let prompt { context.localizedReason = prompt }
        q[kSecUseAuthenticationContext as String] = context
        var result: AnyObject?
        let status = SecItemCopyMatching(q as CFDictionary, &result)
        if status == errSecItemNotFound {
            // Gone although it was stored gated: the biometry set changed and the system deleted it.
            if SecItemCopyMatching(query(marker(key)) as CFDictionary, nil) == errSecSuccess { throw .presence(.keyInvalidated) }
            return nil
        }
        guard status == errSecSuccess else { throw Self.error(status) }
        return result as? Data
    }

    public func contains(_ key: String) async throws(SecretStoreError) -> Bool {
        var q = query(key)
        let context = LAContext()
        context.interactionNotAllowed = true  // never prompt: a gated item answers errSecInteractionNotAllowed
        q[kSecUseAuthenticationContext as String] = context
        let status = SecItemCopyMatching(q as CFDictionary, nil)
        switch status {
        case errSecSuccess, errSecInteractionNotAllowed: return true
        case errSecItemNotFound: return false
        default: throw Self.error(status)
        }
    }

    public func remove(_ key: String) async throws(SecretStoreError) {
        SecItemDelete(query(marker(key)) as CFDictionary)
        let status = SecItemDelete(query(key) as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw Self.error(status) }
    }

    static func error(_ status: OSStatus) -> SecretStoreError {
        LocalAuthenticationError(osStatus: status).map { .presence($0) } ?? .unexpected(status: status)
    }
}
#endif
