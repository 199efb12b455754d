#if canImport(AuthenticationServices) && (os(iOS) || os(macOS) || os(visionOS))
    import AuthenticationServices
    public import Foundation

    /// `AuthorizationBrowser` on Apple platforms: `ASWebAuthenticationSession`, sharing the system browser's cookies
    /// (`prefersEphemeralWebBrowserSession` false, so the user's Trifactor sign-in and passkeys serve every app), with
    /// the callback caught by the redirect URI's custom scheme. The callback URL (Sendable) is made in the completion
    /// handler and handed to a `OneShotResumer`, so the task resumes exactly once; the user's cancel is
    /// `TrifactorError.cancelled`, and a cancelled task closes the sheet. Compiled on Apple platforms only.
    @MainActor
    public final class WebAuthenticationSessionBrowser: NSObject, AuthorizationBrowser,
        ASWebAuthenticationPresentationContextProviding
    {
        private let anchor: ASPresentationAnchor
        private var session: ASWebAuthenticationSession?

        /// A browser that shows its sheet over `anchor`.
        public init(anchor: ASPresentationAnchor) { self.anchor = anchor }

        /// - Throws: `TrifactorError` `.cancelled` (the user closed the sheet, or the task was cancelled),
        ///   `.invalidArgument` for a redirect URI without a custom scheme, `.callbackRejected` when the sheet
        ///   could not start.
        public func open(_ url: URL, redirectURI: URL) async throws(TrifactorError) -> URL {
            guard let scheme = redirectURI.scheme, scheme != "http", scheme != "https" else {
                throw .invalidArgument("The redirect URI needs an app's own scheme (com.example.app:/oauth).")
            }
            guard session == nil else { throw .invalidArgument("A sign-in is already showing.") }
            let resumer = OneShotResumer<URL>()
            let session = ASWebAuthenticationSession(url: url, callbackURLScheme: scheme) { callback, error in
                if let callback {
                    resumer.resume(returning: callback)
                } else if (error as? ASWebAuthenticationSessionError)?.code == .canceledLogin {
                    resumer.resume(throwing: TrifactorError.cancelled)
                } else {
                    resumer.resume(throwing: TrifactorError.callbackRejected("The sign-in page could not finish."))
                }
            }
            session.presentationContextProvider = self
            session.prefersEphemeralWebBrowserSession = false
            self.session = session
            defer {
                if Task.isCancelled { session.cancel() }
                self.session = nil
            }
            do {
                return try await withTaskCancellationHandler {
                    try await withCheckedThrowingContinuation { continuation in
                        if resumer.start(continuation), !session.start() {
                            resumer.resume(throwing: TrifactorError.callbackRejected("The sign-in page did not open."))
                        }
                    }
                } onCancel: {
                    resumer.cancel()
                }
            } catch let error as TrifactorError {
                throw error
            } catch {
                throw .cancelled  // CancellationError
            }
        }

        public func presentationAnchor(for session: ASWebAuthenticationSession) -> ASPresentationAnchor { anchor }
    }
#endif
