public import Foundation

/// Shows the provider's sign-in page and hands back where it sent the browser in the end: on Apple platforms
/// `WebAuthenticationSessionBrowser` (`ASWebAuthenticationSession`); on Linux `LoopbackRedirect` from
/// `TrifactorKitVault` (the system browser, and a listener on 127.0.0.1 for the redirect, RFC 8252 §7.3).
public protocol AuthorizationBrowser: Sendable {
    /// Opens `url` and returns the URL the provider redirected to, which starts with `redirectURI`.
    /// - Throws: `TrifactorError` `.cancelled` when the user closed the page, `.expired` when no answer came in time.
    func open(_ url: URL, redirectURI: URL) async throws(TrifactorError) -> URL
}
