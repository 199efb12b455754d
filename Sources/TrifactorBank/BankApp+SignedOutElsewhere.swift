import Foundation
import HTTP
import TrifactorKit

/// Signed out elsewhere: "Sign out everywhere else", signing out one session
/// from another browser, or a password change end the customer's other
/// Trifactor sessions. The bank learns it on the next signed-in request (at
/// most `sessionCheckInterval` late, or at once from any Trifactor call),
/// ends its own session and sends the browser to sign in again.
extension BankApp {
    /// The sign-in page's notice after a bank session ended because its Trifactor session had.
    static let signedOutElsewhereNotice = "You were signed out, perhaps from another device. Please sign in again."

    /// Asks Trifactor whether the customer's session lives, when the last answer is older than `sessionCheckInterval`:
    /// the signed-out answer when it ended, nil to go on (it lives, or Trifactor could not say: asked again next time).
    func checkTrifactorSession(_ session: BankSession, cookie: String?, _ request: Request) -> Response? {
        // The standard path holds no Trifactor session token: Trifactor says when it ends (back-channel logout).
        guard session.standard == nil,
            session.trifactorCheckDue(now: now(), interval: configuration.sessionCheckInterval)
        else { return nil }
        let client = trifactor(session, request)
        do {
            _ = try blocking({ try await client.currentSession() })
            session.trifactorChecked(now())
            return nil
        } catch {
            return trifactorSessionEnded(session, cookie: cookie, error: error)
                ? signedOutElsewhere(cookie, request) : nil
        }
    }

    /// Whether this browser's signed-in `session` (still the one under `cookie`: not signed out or rotated by the
    /// handler) lost its Trifactor session: its token is gone (TrifactorKit forgets it when Trifactor says the session
    /// ended), or `error` says so.
    func trifactorSessionEnded(_ session: BankSession, cookie: String?, error: (any Error)?) -> Bool {
        guard session.standard == nil, sessions.find(cookie, now: now()) === session else { return false }
        return !session.secrets.holdsToken || error.map(Self.endsSession) == true
    }

    /// Whether a Trifactor failure means the customer's session is over (not a refused code, not a step-up, not an outage).
    static func endsSession(_ error: any Error) -> Bool {
        guard let error = error as? TrifactorError else { return false }
        if error.code == .notSignedIn { return true }
        return error.problem.map { [.unauthenticated, .sessionExpired].contains($0.code) } ?? false
    }

    /// Ends the bank session under `cookie` and sends the browser to sign in again with the notice (the passkey
    /// script gets the sentence as JSON); the recognised-browser cookie stays.
    func signedOutElsewhere(_ cookie: String?, _ request: Request) -> Response {
        sessions.end(cookie)
        let cleared = SessionCookie.cleared(secure: configuration.secure)
        if request.header("content-type")?.hasPrefix("application/json") == true {
            var response = jsonError(401, Self.signedOutElsewhereNotice)
            response.headers.append(("Set-Cookie", cleared))
            return response
        }
        return redirect("/?ended=1", cookies: [cleared])
    }
}
