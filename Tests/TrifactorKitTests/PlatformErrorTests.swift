import Testing
import TrifactorKit

@Suite("What Apple's key and keychain errors mean, decided in the core")
struct PlatformErrorTests {
    typealias E = PlatformError
    static let la = E.localAuthentication, status = E.osStatus, token = E.cryptoTokenKit

    @Test(
        "a Secure Enclave signature cancelled at the Face ID sheet (TKError −4, nothing under it) is the user's cancel, not 'unexpected'"
    )
    func tokenKitCancel() {
        #expect(E.secretStoreError([E(domain: Self.token, code: -4)]) == .presence(.userCancel))
        #expect(E.secretStoreError([E(domain: Self.token, code: -5)]) == .presence(.failed))
        #expect(E.secretStoreError([E(domain: Self.token, code: -9)]) == .presence(.interactionNotAllowed))
        // A CryptoTokenKit code that is not about presence stays unexpected, with its code.
        #expect(E.secretStoreError([E(domain: Self.token, code: -3)]) == .unexpected(status: -3))
    }

    @Test("an LAError anywhere in the chain is the most precise answer: a lockout under a token error is a lockout")
    func localAuthenticationWins() {
        #expect(
            E.secretStoreError([E(domain: Self.token, code: -5), E(domain: Self.la, code: -8)])
                == .presence(.biometryLockout))
        #expect(
            E.secretStoreError([
                E(domain: "CryptoKit.CryptoKitError", code: 1), E(domain: Self.status, code: -25293),
                E(domain: Self.la, code: -2),
            ])
                == .presence(.userCancel))
    }

    @Test(
        "a Keychain status about presence counts before CryptoTokenKit's code; one that is not about presence does not")
    func keychainStatus() {
        #expect(
            E.secretStoreError([E(domain: Self.token, code: -4), E(domain: Self.status, code: -25308)])
                == .presence(.interactionNotAllowed))
        // ErrSecItemNotFound.
        #expect(E.secretStoreError([E(domain: Self.status, code: -25300)]) == .unexpected(status: -25300))
        #expect(E.secretStoreError([]) == .unexpected(status: 0))
    }

    @Test("no Secure Enclave is its own error, not 'Face ID not available'")
    func noSecureHardware() {
        #expect(SecretStoreError.noSecureHardware != .presence(.biometryNotAvailable))
        #expect(SecretStoreError.noSecureHardware.description.contains("no Secure Enclave"))
    }
}
