#if canImport(AuthenticationServices) && (os(iOS) || os(macOS) || os(visionOS))
    import API
    import AuthenticationServices
    import Foundation

    /// `PasskeyAuthenticator` on Apple platforms: AuthenticationServices' platform passkeys
    /// (`ASAuthorizationPlatformPublicKeyCredentialProvider`). It only translates: the server's JSON to bytes and
    /// the credential back (`PasskeyJSON`), the platform's failures to `PasskeyError` (`PasskeyError.fromPlatform`),
    /// and every outcome goes through a `OneShotResumer`, so the continuation is resumed exactly once. The
    /// credential's JSON is built in the delegate callback, on the main actor, and only that Sendable value leaves it.
    /// A cancelled task dismisses the sheet (`ASAuthorizationController.cancel()`) and throws `CancellationError`.
    /// Compiled on Apple platforms only (iOS 16, macOS 13 and later).
    @available(iOS 16.0, macOS 13.0, *)
    @MainActor
    public final class AuthenticationServicesPasskeys: NSObject, PasskeyAuthenticator,
        ASAuthorizationControllerDelegate,
        ASAuthorizationControllerPresentationContextProviding
    {
        private struct Pending {
            let controller: ASAuthorizationController
            let resumer: OneShotResumer<CredentialJSON>
            let ceremony: PasskeyCeremony
        }

        private let anchor: ASPresentationAnchor
        private var pending: Pending?

        public init(anchor: ASPresentationAnchor) { self.anchor = anchor }

        /// - Throws: `PasskeyError` (`.alreadyRegistered` when one of `excludeCredentials` is on this device, which the
        ///   platform checks from iOS 17.4 and macOS 14.4), or `CancellationError`.
        /// - Important: Before iOS 17.4 the platform cannot be told what to exclude: enrolling again on the same Apple
        ///   account replaces the synced passkey, and the server's older passkey factor is then held by nobody.
        public func create(_ options: CreationOptions) async throws -> CredentialJSON {
            let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: options.rp.id)
            let request = provider.createCredentialRegistrationRequest(
                challenge: try PasskeyJSON.bytes(options.challenge), name: options.user.name,
                userID: try PasskeyJSON.bytes(options.user.id))
            request.displayName = options.user.displayName
            request.userVerificationPreference = .required
            let excluded = try PasskeyJSON.excludedCredentialIDs(options)
            #if os(iOS) || os(macOS)
                if #available(iOS 17.4, macOS 14.4, *), !excluded.isEmpty {
                    request.excludedCredentials = excluded.map {
                        ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: $0)
                    }
                }
            #endif
            return try await perform(request, ceremony: .registration)
        }

        /// - Throws: `PasskeyError`, or `CancellationError`.
        public func get(_ options: RequestOptions) async throws -> CredentialJSON {
            let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: options.rpId)
            let request = provider.createCredentialAssertionRequest(challenge: try PasskeyJSON.bytes(options.challenge))
            request.allowedCredentials = try PasskeyJSON.allowedCredentialIDs(options).map {
                ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: $0)
            }
            request.userVerificationPreference = .required
            return try await perform(request, ceremony: .assertion)
        }

        private func perform(_ request: ASAuthorizationRequest, ceremony: PasskeyCeremony) async throws
            -> CredentialJSON
        {
            // One sheet at a time: a second call while one is showing is refused, never left hanging.
            guard pending == nil else { throw PasskeyError(.busy) }
            let resumer = OneShotResumer<CredentialJSON>()
            let controller = ASAuthorizationController(authorizationRequests: [request])
            controller.delegate = self  // weak: `pending` keeps the controller, the caller keeps self
            controller.presentationContextProvider = self
            pending = Pending(controller: controller, resumer: resumer, ceremony: ceremony)
            defer {
                // Back on the main actor after an answer, a cancellation included: a sheet still up is dismissed here.
                if Task.isCancelled { controller.cancel() }
                if pending?.controller === controller { pending = nil }
            }
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    // False when the task was cancelled before this ran: the continuation has its answer, no sheet shows.
                    if resumer.start(continuation) { controller.performRequests() }
                }
            } onCancel: {
                resumer.cancel()
            }
        }

        public func authorizationController(
            controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization
        ) {
            // A late answer from a cancelled sheet.
            guard let pending, pending.controller === controller else { return }
            // Built here, on the main actor: only the Sendable JSON crosses to the awaiting task.
            do {
                pending.resumer.resume(
                    returning: try Self.credential(authorization.credential, ceremony: pending.ceremony))
            } catch {
                pending.resumer.resume(throwing: error)
            }
        }

        private static func credential(_ credential: any ASAuthorizationCredential, ceremony: PasskeyCeremony) throws
            -> CredentialJSON
        {
            switch (ceremony, credential) {
            case (.registration, let registration as ASAuthorizationPlatformPublicKeyCredentialRegistration):
                return try PasskeyJSON.registration(
                    credentialID: registration.credentialID, clientDataJSON: registration.rawClientDataJSON,
                    attestationObject: registration.rawAttestationObject)
            case (.assertion, let assertion as ASAuthorizationPlatformPublicKeyCredentialAssertion):
                return try PasskeyJSON.assertion(
                    credentialID: assertion.credentialID, clientDataJSON: assertion.rawClientDataJSON,
                    authenticatorData: assertion.rawAuthenticatorData, signature: assertion.signature,
                    userID: assertion.userID)
            default:
                throw PasskeyError(.unexpectedCredential)
            }
        }

        public func authorizationController(
            controller: ASAuthorizationController, didCompleteWithError error: any Error
        ) {
            guard let pending, pending.controller === controller else { return }
            let nsError = error as NSError
            var chain: [PlatformError] = []
            var current: NSError? = nsError
            while let e = current, chain.count < 8 {
                chain.append(PlatformError(domain: e.domain, code: e.code))
                current = e.userInfo[NSUnderlyingErrorKey] as? NSError
            }
            let reason = nsError.localizedFailureReason ?? nsError.localizedDescription
            pending.resumer.resume(
                throwing: PasskeyError.fromPlatform(chain, reason: reason, ceremony: pending.ceremony))
        }

        public func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor { anchor }
    }
#endif
