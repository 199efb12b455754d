#if canImport(Security) && canImport(LocalAuthentication)
    import Foundation
    import LocalAuthentication
    import Security

    /// `SecretStore` on Apple platforms: generic-password Keychain items (`kSecClassGenericPassword`) with a service,
    /// the key as account, and an optional access group. Session tokens are `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`;
    /// gated items carry `SecAccessControl` with `.userPresence` or `.biometryCurrentSet`.
    /// A cancelled prompt throws `.presence(.userCancel)`, never nil; a gated item that vanished because the enrolled
    /// biometrics changed throws `.presence(.keyInvalidated)` (an ungated marker item remembers that it existed).
    /// Items live in the data-protection keychain on macOS too.
    ///
    /// It only translates: the order of `SecItem` calls on a write is `KeychainWritePlan`'s (a gated item is deleted
    /// and added, never updated through a prompt with no reason), and so is the check that the device can hold a
    /// gated item at all (a passcode, enrolled biometry). Every `SecItem` call runs on `BlockingCallQueue.keychain`,
    /// never on the cooperative pool, because a read behind a Face ID sheet blocks its thread for seconds.
    /// Keychain items outlive the app: `removeAll()` with `ReinstallGuard` clears them after a reinstall.
    /// Compiled on Apple platforms only.
    public struct KeychainSecretStore: SecretStore {
        public let service: String
        public let accessGroup: String?
        private let queue: BlockingCallQueue

        public init(service: String, accessGroup: String? = nil) {
            self.service = service
            self.accessGroup = accessGroup
            queue = .keychain
        }

        private func query(_ key: String) -> [String: Any] {
            var q = serviceQuery()
            q[kSecAttrAccount as String] = key
            return q
        }

        private func serviceQuery() -> [String: Any] {
            var q: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                kSecUseDataProtectionKeychain as String: true,
            ]
            if let accessGroup { q[kSecAttrAccessGroup as String] = accessGroup }
            return q
        }

        private func marker(_ key: String) -> String { "\(key).gated" }

        /// - Throws: `.presence(.passcodeNotSet)`, `.presence(.biometryNotEnrolled)` or `.presence(.biometryNotAvailable)`
        ///   before touching the Keychain when the device cannot hold a gated item of this protection.
        public func set(_ value: Data, for key: String, protection: ItemProtection) async throws(SecretStoreError) {
            let presence = LocalAuthenticationPresence()
            if let blocker = KeychainWritePlan.blocker(for: protection, readiness: { presence.readiness(for: $0) }) {
                throw blocker
            }
            if let failure = await queue.run({ self.write(value, for: key, protection: protection) }) { throw failure }
        }

        /// Runs the plan's steps; nil when written. On the keychain queue.
        private func write(_ value: Data, for key: String, protection: ItemProtection) -> SecretStoreError? {
            var plan = KeychainWritePlan(protection: protection)
            var action = plan.start()
            while case .run(let step) = action {
                action = plan.finished(step, status: perform(step, value: value, key: key, protection: protection))
            }
            if case .fail(let error) = action { return error }
            return nil
        }

        private func perform(_ step: KeychainWritePlan.Step, value: Data, key: String, protection: ItemProtection)
            -> OSStatus
        {
            switch step {
            case .add:
                var attributes = query(key)
                attributes[kSecValueData as String] = value
                switch protection {
                case .afterFirstUnlockThisDeviceOnly:
                    attributes[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
                case .userPresence, .biometryCurrentSet:
                    let flags: SecAccessControlCreateFlags =
                        protection == .userPresence ? .userPresence : .biometryCurrentSet
                    guard
                        let access = SecAccessControlCreateWithFlags(
                            nil, kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, flags, nil)
                    else {
                        return errSecParam
                    }
                    attributes[kSecAttrAccessControl as String] = access
                }
                return SecItemAdd(attributes as CFDictionary, nil)
            case .updateWithoutPrompt:
                var q = query(key)
                let context = LAContext()
                // A gated item there answers errSecInteractionNotAllowed, never a sheet.
                context.interactionNotAllowed = true
                q[kSecUseAuthenticationContext as String] = context
                let changes: [String: Any] = [
                    kSecValueData as String: value,
                    kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
                ]
                return SecItemUpdate(q as CFDictionary, changes as CFDictionary)
            case .delete:
                return SecItemDelete(query(key) as CFDictionary)
            case .addMarker:
                let mark = query(marker(key)).merging([
                    kSecValueData as String: Data([1]),
                    kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
                ]) { $1 }
                return SecItemAdd(mark as CFDictionary, nil)
            case .removeMarker:
                return SecItemDelete(query(marker(key)) as CFDictionary)
            }
        }

        public func get(_ key: String, prompt: String?) async throws(SecretStoreError) -> Data? {
            try await queue.run { () -> Result<Data?, SecretStoreError> in
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
                    if SecItemCopyMatching(query(marker(key)) as CFDictionary, nil) == errSecSuccess {
                        return .failure(.presence(.keyInvalidated))
                    }
                    return .success(nil)
                }
                guard status == errSecSuccess else { return .failure(KeychainWritePlan.error(status: status)) }
                return .success(result as? Data)
            }.get()
        }

        public func contains(_ key: String) async throws(SecretStoreError) -> Bool {
            try await queue.run { () -> Result<Bool, SecretStoreError> in
                var q = query(key)
                let context = LAContext()
                context.interactionNotAllowed = true  // never prompt: a gated item answers errSecInteractionNotAllowed
                q[kSecUseAuthenticationContext as String] = context
                let status = SecItemCopyMatching(q as CFDictionary, nil)
                switch status {
                case errSecSuccess, errSecInteractionNotAllowed: return .success(true)
                case errSecItemNotFound: return .success(false)
                default: return .failure(KeychainWritePlan.error(status: status))
                }
            }.get()
        }

        public func remove(_ key: String) async throws(SecretStoreError) {
            let status = await queue.run { () -> OSStatus in
                SecItemDelete(query(marker(key)) as CFDictionary)
                return SecItemDelete(query(key) as CFDictionary)
            }
            guard status == errSecSuccess || status == errSecItemNotFound else {
                throw KeychainWritePlan.error(status: status)
            }
        }

        /// Removes every item of this service (and access group): tokens, gated secrets, markers and the Secure Enclave
        /// keys' handles. For `ReinstallGuard.clearIfReinstalled`, and for "remove this device". An access group shared
        /// with other apps loses their items of this service too.
        public func removeAll() async throws(SecretStoreError) {
            let status = await queue.run { SecItemDelete(serviceQuery() as CFDictionary) }
            guard status == errSecSuccess || status == errSecItemNotFound else {
                throw KeychainWritePlan.error(status: status)
            }
        }

        static func error(_ status: OSStatus) -> SecretStoreError { KeychainWritePlan.error(status: status) }
    }
#endif
