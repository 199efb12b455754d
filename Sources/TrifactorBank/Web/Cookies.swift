import Core
import Foundation
import Crypto

/// The bank's session cookie: `HttpOnly` (no script reads it),
/// `SameSite=Strict` (no other site's page sends it), `Secure` under TLS,
/// `Path=/`; its value is 256 random bits, stored only as SHA-256.
public struct SessionCookie: Sendable, Equatable {
    public static let name = "bank_session"

    /// The cookie's value (the session's secret).
    public let value: String
    /// Set `Secure` (the bank is served over TLS).
    public let secure: Bool

    public init(value: String, secure: Bool) {
        self.value = value
        self.secure = secure
    }

    /// A new session's cookie.
    public static func fresh(secure: Bool) -> SessionCookie {
        SessionCookie(value: Base64URL.encode(SecureRandom.bytes(32)), secure: secure)
    }

    /// `Set-Cookie` for this cookie.
    public var setCookie: String {
        "\(Self.name)=\(value); Path=/; HttpOnly; SameSite=Strict\(secure ? "; Secure" : "")"
    }

    /// `Set-Cookie` that removes it.
    public static func cleared(secure: Bool) -> String {
        "\(name)=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict\(secure ? "; Secure" : "")"
    }

    /// The session cookie's value in a `Cookie` header, if it is well formed (43 base64url characters).
    public static func value(in header: String?) -> String? {
        guard let header else { return nil }
        for pair in header.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.count == 2, parts[0] == name, parts[1].count == 43,
               parts[1].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) {
                return parts[1]
            }
        }
        return nil
    }
}

/// Cross-site request forgery tokens: one per bank session, random, in a
/// hidden field of every form, compared in constant time on every POST.
public enum CSRF {
    /// The form field's name.
    public static let field = "csrf"

    /// A new token.
    public static func token() -> String { Base64URL.encode(SecureRandom.bytes(32)) }

    /// Whether a submitted token is the session's.
    public static func isValid(submitted: String?, expected: String) -> Bool {
        guard let submitted, !expected.isEmpty else { return false }
        return ConstantTime.equals(submitted, expected)
    }
}
