#if canImport(AuthenticationServices) && (os(iOS) || os(macOS) || os(visionOS))
import API
import AuthenticationServices
import Foundation

/// `PasskeyAuthenticator` on Apple platforms: AuthenticationServices'
/// platform passkeys (`ASAuthorizationPlatformPublicKeyCredentialProvider`),
/// translating the server's WebAuthn JSON in and the credential's out.
/// Compiled on Apple platforms only (iOS 16, macOS 13 and later).
@available(iOS 16.0, macOS 13.0, *)
@MainActor
public final class AuthenticationServicesPasskeys: NSObject, PasskeyAuthenticator, ASAuthorizationControllerDelegate,
    ASAuthorizationControllerPresentationContextProviding {
    private let anchor: ASPresentationAnchor
    private var continuation: CheckedContinuation<ASAuthorization, any Error>?

    public init(anchor: ASPresentationAnchor) { self.anchor = anchor }

    public func create(_ options: CreationOptions) async throws -> CredentialJSON {
        let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: options.rp.id)
        let request = provider.createCredentialRegistrationRequest(challenge: try Self.data(options.challenge), name: options.user.name,
                                                                   userID: try Self.data(options.user.id))
        request.displayName = options.user.displayName
        request.userVerificationPreference = .required
        guard let registration = try await perform(request).credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration,
              let attestation = registration.rawAttestationObject else { throw TrifactorError.presence(.failed) }
        let id = Self.base64url(registration.credentialID)
        return CredentialJSON(id: id, rawId: id, response: .init(clientDataJSON: Self.base64url(registration.rawClientDataJSON),
                                                                 attestationObject: Self.base64url(attestation), transports: ["internal", "hybrid"]))
    }

    public func get(_ options: RequestOptions) async throws -> CredentialJSON {
        let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: options.rpId)
        let request = provider.createCredentialAssertionRequest(challenge: try Self.data(options.challenge))
        request.allowedCredentials = try options.allowCredentials.map { ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: try Self.data($0.id)) }
        request.userVerificationPreference = .required
        guard let assertion = try await perform(request).credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion else {
            throw TrifactorError.presence(.failed)
        }
        let id = Self.base64url(assertion.credentialID)
        return CredentialJSON(id: id, rawId: id, response: .init(clientDataJSON: Self.base64url(assertion.rawClientDataJSON),
                                                                 authenticatorData: Self.base64url(assertion.rawAuthenticatorData),
                                                                 signature: Self.base64url(assertion.signature), userHandle: Self.base64url(assertion.userID)))
    }

    private func perform(_ request: ASAuthorizationRequest) async throws -> ASAuthorization {
        // One sheet at a time: a second call while one is showing is refused, never left hanging.
        guard continuation == nil else { throw TrifactorError.invalidArgument("A passkey request is already showing.") }
        return try await withCheckedThrowingContinuation { continuation in
            self.continuation = continuation
            let controller = ASAuthorizationController(authorizationRequests: [request])
            controller.delegate = self
            controller.presentationContextProvider = self
            controller.performRequests()
        }
    }

    public func authorizationController(controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization) {
        continuation?.resume(returning: authorization)
        continuation = nil
    }

    public func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error) {
        let code = (error as? ASAuthorizationError)?.code
        let answer: TrifactorError = switch code {
        case .canceled?: .presence(.userCancel)
        case .matchedExcludedCredential?: .invalidArgument("This device already holds a passkey for this account.")
        default: .presence(.failed)
        }
        continuation?.resume(throwing: answer)
        continuation = nil
    }

    public func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor { anchor }

    nonisolated static func data(_ base64url: String) throws -> Data {
        var text = base64url.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        guard let data = Data(base64Encoded: text) else { throw TrifactorError.invalidArgument("The server sent a value that is not base64url.") }
        return data
    }

    nonisolated static func base64url(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
#endif
