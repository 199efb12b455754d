#if canImport(CryptoKit) && canImport(LocalAuthentication)
    import CryptoKit
    import Foundation
    import LocalAuthentication
    import Security

    /// `DeviceKeyStore` on Apple platforms: a P-256 key in the Secure Enclave
    /// (CryptoKit `SecureEnclave.P256.Signing.PrivateKey`) with `.privateKeyUsage`
    /// and, for an approval key, the check that releases it, its opaque `dataRepresentation` kept in the Keychain. Signs
    /// DER ECDSA and exports the SubjectPublicKeyInfo the server expects.
    /// Compiled on Apple platforms only.
    public struct SecureEnclaveKeyStore: DeviceKeyStore {
        let keychain: KeychainSecretStore

        public init(keychain: KeychainSecretStore) { self.keychain = keychain }

        public func gate(for policy: PresencePolicy) -> ApprovalGate {
            policy == .biometrics ? .biometry : .biometryOrPasscode
        }

        public func createKey(tag: String, releasedBy: PresencePolicy?) async throws(SecretStoreError) -> Data {
            guard SecureEnclave.isAvailable else { throw .noSecureHardware }
            guard try await !keychain.contains("\(tag).enclave-key") else {
                throw .damaged("a key named \(tag) exists already")
            }
            // The key that signs polls never prompts and must sign while the screen is locked (a long poll
            // runs in the background); an approval key is released by the Secure Enclave only after the
            // check itself, and needs a passcode set (which biometry needs anyway).
            let flags: SecAccessControlCreateFlags
            let accessible: CFString
            switch releasedBy {
            case nil: (flags, accessible) = ([.privateKeyUsage], kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly)
            case .biometrics:
                (flags, accessible) = (
                    [.privateKeyUsage, .biometryCurrentSet], kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly
                )
            case .biometricsOrPasscode:
                (flags, accessible) = (
                    [.privateKeyUsage, .userPresence], kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly
                )
            }
            guard let access = SecAccessControlCreateWithFlags(nil, accessible, flags, nil) else {
                throw .unexpected(status: errSecParam)
            }
            do {
                let key = try SecureEnclave.P256.Signing.PrivateKey(accessControl: access)
                try await keychain.set(
                    key.dataRepresentation, for: "\(tag).enclave-key", protection: .afterFirstUnlockThisDeviceOnly)
                return key.publicKey.derRepresentation
            } catch let error as SecretStoreError {
                throw error
            } catch {
                throw Self.translate(error)
            }
        }

        public func publicKey(tag: String) async throws(SecretStoreError) -> Data? {
            guard let data = try await keychain.get("\(tag).enclave-key", prompt: nil) else { return nil }
            guard let key = try? SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: data) else {
                throw .presence(.keyInvalidated)
            }
            return key.publicKey.derRepresentation
        }

        public func sign(_ message: Data, tag: String, reason: String) async throws(SecretStoreError) -> Data {
            guard let data = try await keychain.get("\(tag).enclave-key", prompt: nil) else {
                throw .damaged("no key named \(tag)")
            }
            let context = SigningContext()  // a fresh context: the biometric prompt for this signature
            context.context.localizedReason = reason
            // The signature of an approval key blocks its thread while the Face ID sheet is up: it runs off the
            // cooperative pool, on a thread of its own rather than the Keychain's queue (the poll key and every Keychain
            // read would wait behind the sheet, and a poll stamped before it would reach the server too late), and a
            // cancelled task takes the sheet down.
            let result: Result<Data, SecretStoreError> = await withTaskCancellationHandler {
                await BlockingCallQueue.detached {
                    do {
                        let key = try SecureEnclave.P256.Signing.PrivateKey(
                            dataRepresentation: data, authenticationContext: context.context)
                        return .success(try key.signature(for: message).derRepresentation)
                    } catch {
                        return .failure(Self.translate(error))
                    }
                }
            } onCancel: {
                context.context.invalidate()
            }
            return try result.get()
        }

        /// One signature's `LAContext`. `@unchecked Sendable`: the context is configured before it is shared, then used
        /// by the one signature on the Keychain's queue, and from elsewhere only by `invalidate()`, which exists to be
        /// called while an evaluation runs on another thread.
        final class SigningContext: @unchecked Sendable {
            let context = LAContext()
        }

        /// CryptoKit throws `CryptoKitError` or CryptoTokenKit errors whose cause
        /// (an `LAError`, an `OSStatus`) sits in the `NSUnderlyingErrorKey` chain:
        /// the chain is handed to the core (`PlatformError.secretStoreError`), which decides.
        static func translate(_ error: any Error) -> SecretStoreError {
            var chain: [PlatformError] = []
            var current: NSError? = error as NSError
            while let e = current, chain.count < 8 {
                chain.append(PlatformError(domain: e.domain, code: e.code))
                current = e.userInfo[NSUnderlyingErrorKey] as? NSError
            }
            return PlatformError.secretStoreError(chain)
        }

        public func deleteKey(tag: String) async throws(SecretStoreError) {
            try await keychain.remove("\(tag).enclave-key")
        }
    }
#endif
