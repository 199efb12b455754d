import Core
import Crypto
import Foundation

/// The bank's session cookie: `HttpOnly` (no script reads it),
/// `SameSite=Strict` (no other site's page sends it), `Secure` under TLS,
/// `Path=/`; its value is 256 random bits, stored only as SHA-256.
package struct SessionCookie: Sendable, Equatable {
    package static let name = "bank_session"

    /// The cookie's value (the session's secret).
    package let value: String
    /// Set `Secure` (the bank is served over TLS).
    package let secure: Bool

    package init(value: String, secure: Bool) {
        self.value = value
        self.secure = secure
    }

    /// A new session's cookie.
    package static func fresh(secure: Bool) -> SessionCookie {
        SessionCookie(value: CookieHeader.randomValue(), secure: secure)
    }

    /// `Set-Cookie` for this cookie.
    package var setCookie: String { CookieHeader.set(Self.name, value, secure: secure) }

    /// `Set-Cookie` that removes it.
    package static func cleared(secure: Bool) -> String { CookieHeader.cleared(name, secure: secure) }

    /// The session cookie's value in a `Cookie` header, if it is well formed (43 base64url characters).
    package static func value(in header: String?) -> String? { CookieHeader.value(name, in: header) }
}

/// The bank's cookies as headers: every one `Path=/; HttpOnly; SameSite=Strict`,
/// `Secure` under TLS, and read back only when it holds 43 base64url
/// characters (256 random bits).
enum CookieHeader {
    /// 256 random bits as 43 base64url characters.
    static func randomValue() -> String { Base64URL.encode(SecureRandom.bytes(32)) }

    /// `Set-Cookie` for `name=value`, for the browser's session or for `maxAge` seconds.
    static func set(_ name: String, _ value: String, secure: Bool, maxAge: Int? = nil) -> String {
        "\(name)=\(value); Path=/\(maxAge.map { "; Max-Age=\($0)" } ?? ""); HttpOnly; SameSite=Strict\(secure ? "; Secure" : "")"
    }

    /// `Set-Cookie` that removes `name`.
    static func cleared(_ name: String, secure: Bool) -> String { set(name, "", secure: secure, maxAge: 0) }

    /// The value of cookie `name` in a `Cookie` header, whatever its length up to `maxLength`, if it holds only
    /// base64url characters and dots (a signed value of the bank's own).
    static func raw(_ name: String, in header: String?, maxLength: Int) -> String? {
        guard let header else { return nil }
        for pair in header.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.count == 2, parts[0] == name, parts[1].count <= maxLength,
                parts[1].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) })
            {
                return parts[1]
            }
        }
        return nil
    }

    /// The value of cookie `name` in a `Cookie` header, if it is well formed.
    static func value(_ name: String, in header: String?) -> String? {
        guard let header else { return nil }
        for pair in header.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.count == 2, parts[0] == name, parts[1].count == 43,
                parts[1].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
            {
                return parts[1]
            }
        }
        return nil
    }
}

/// Cross-site request forgery tokens: one per bank session, random, in a
/// hidden field of every form, compared in constant time on every POST.
package enum CSRF {
    /// The form field's name.
    package static let field = "csrf"

    /// A new token.
    package static func token() -> String { Base64URL.encode(SecureRandom.bytes(32)) }

    /// Whether a submitted token is the session's.
    package static func isValid(submitted: String?, expected: String) -> Bool {
        guard let submitted, !expected.isEmpty else { return false }
        return ConstantTime.equals(submitted, expected)
    }
}

/// The CSRF token of a browser the bank keeps nothing for yet (before the
/// email is posted, an account opening or a passkey sign-in starts): a
/// random nonce in an `HttpOnly` cookie, and in the form the nonce's HMAC
/// under the bank's secret (a signed double submit). A forged POST has
/// neither the cookie (`SameSite=Strict`) nor, without the secret, a token
/// that matches one; the server remembers nothing until the token checks.
struct VisitorCSRF: Sendable {
    /// The nonce cookie's name.
    static let cookie = "bank_visitor"

    let secret: [UInt8]

    /// The form token for `nonce`.
    func token(for nonce: String) -> String {
        Base64URL.encode(
            HMAC.authenticate(Array("trifactor-bank visitor csrf:\(nonce)".utf8), key: secret, algorithm: .sha256))
    }

    /// The browser's token, and the `Set-Cookie` that gives it a nonce when it has none.
    func issue(cookieHeader: String?, secure: Bool) -> (token: String, setCookie: String?) {
        if let nonce = CookieHeader.value(Self.cookie, in: cookieHeader) { return (token(for: nonce), nil) }
        let nonce = CookieHeader.randomValue()
        return (token(for: nonce), CookieHeader.set(Self.cookie, nonce, secure: secure))
    }

    /// Whether `submitted` is the token of the nonce in the browser's cookie (compared in constant time).
    func isValid(submitted: String?, cookieHeader: String?) -> Bool {
        guard let submitted, let nonce = CookieHeader.value(Self.cookie, in: cookieHeader) else { return false }
        return ConstantTime.equals(submitted, token(for: nonce))
    }
}
