import Core
import Crypto
import Foundation
import HTTP

/// The hosted sign-in's cookies. Every one is HttpOnly and `SameSite=Lax`
/// (the relying party's top-level navigation to `/authorize` must carry the
/// single sign-on session, so `prompt=none` works; a cross-site POST never
/// carries it). Under TLS they are `Secure` with the `__Host-` prefix (no
/// Domain, Path=/: no subdomain can set or read them).
struct HostedCookies: Sendable {
    /// The issuer is served over TLS.
    let secure: Bool

    /// The single sign-on session: a Trifactor session token, listed and revocable like any other.
    var session: String { name("tf_session") }
    /// A password sign-in waiting for its second factor (the pending credential).
    var pending: String { name("tf_pending") }
    /// An authenticator app being set up (the enrollment session), so a reload shows the same key.
    var enrollment: String { name("tf_enroll") }
    /// A password reset whose emailed code was right (the reset credential).
    var reset: String { name("tf_reset") }
    /// This browser: a random value the forms' CSRF tokens are derived from.
    var browser: String { name("tf_browser") }
    /// This browser recognised for an account after a sign-in with a second factor (a year): the password page
    /// shows that account's sitekey. Unlike `browser`, it outlives signing out and belongs to one account.
    var recognised: String { name("tf_known") }

    private func name(_ base: String) -> String { secure ? "__Host-\(base)" : base }

    /// `Set-Cookie` for `name=value` for `maxAge` seconds (nil: the browser's session).
    func set(_ name: String, _ value: String, maxAge: Int? = nil) -> (name: String, value: String) {
        (
            "Set-Cookie",
            "\(name)=\(value); Path=/\(maxAge.map { "; Max-Age=\($0)" } ?? ""); HttpOnly; SameSite=Lax\(secure ? "; Secure" : "")"
        )
    }

    /// `Set-Cookie` that removes `name`.
    func clear(_ name: String) -> (name: String, value: String) { set(name, "", maxAge: 0) }

    /// The cookie `name` in `request`, when it holds 43 base64url characters (256 random bits).
    static func value(_ name: String, in request: Request) -> String? {
        guard let header = request.header("cookie") else { return nil }
        for pair in header.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name else { continue }
            let value = parts[1].trimmingCharacters(in: .whitespaces)
            return SessionToken.isWellFormed(value) ? value : nil
        }
        return nil
    }

    /// The CSRF token of the forms of flow `flowID` in the browser whose cookie is `browser`: only a page this
    /// server rendered for that browser holds it (the cookie is HttpOnly, so no script reads it either).
    static func csrf(browser: String, flowID: String) -> String {
        SHA256.hex("csrf:\(browser):\(flowID)")
    }
}
