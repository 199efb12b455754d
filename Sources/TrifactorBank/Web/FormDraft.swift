import Core
import Crypto
import Foundation
import WebUI

/// What a refused form keeps for the page it is sent back to (Post/Redirect/Get):
/// the values typed (never a password) and why each field was refused. A
/// session keeps it in memory; a visitor, whom the bank keeps nothing for,
/// carries it in a signed cookie that lives a minute (`DraftCookie`).
struct FormDraft: Sendable, Codable, Equatable {
    /// The fields as typed, by name.
    var values: [String: String] = [:]
    /// The sentence for each refused field, by name.
    var errors: [String: String] = [:]

    init(values: [String: String] = [:], errors: [String: String] = [:]) {
        self.values = values
        self.errors = errors
    }

    /// The hint under a password field of a form sent back with errors elsewhere: a password is never kept in a
    /// draft, so its field comes back empty, and the page says why instead of losing it silently.
    func passwordHint(_ field: String, usual: String) -> String {
        errors.isEmpty || errors[field] != nil ? usual : "Type it again: for your safety it is never kept. " + usual
    }

    /// The draft of `form`'s fields `names` (trimmed) with `errors`.
    init(_ form: Form, keeping names: [String], errors: [String: String] = [:]) {
        var values: [String: String] = [:]
        for name in names { values[name] = form[name] }
        self.init(values: values, errors: errors)
    }

    subscript(_ name: String) -> String? { values[name] }
}

/// A visitor's `FormDraft` in a cookie: the draft and the page it is for as
/// base64url JSON, then `.` and its HMAC under the bank's secret, so a page
/// shows only what this bank wrote. `HttpOnly`, `SameSite=Strict`, a minute.
struct DraftCookie: Sendable {
    /// The cookie's name.
    static let name = "bank_draft"
    /// The largest value taken back (a browser keeps about 4 KiB a cookie).
    static let maxLength = 3_500

    let secret: [UInt8]

    /// How long a draft shows (a refresh shows it again; a later visit does not).
    static let lifetime: TimeInterval = 60

    private struct Payload: Codable {
        let path: String
        let draft: FormDraft
        let at: Int64
    }

    /// `Set-Cookie` carrying `draft` for the page at `path`, written at `now`; nil when it would not fit (the page then
    /// shows no draft).
    func setCookie(_ draft: FormDraft, for path: String, now: Date, secure: Bool) -> String? {
        guard let json = try? JSONEncoder().encode(Payload(path: path, draft: draft, at: now.millis)) else {
            return nil
        }
        let body = Base64URL.encode(Array(json))
        let value = body + "." + signature(body)
        guard value.count <= Self.maxLength else { return nil }
        return CookieHeader.set(Self.name, value, secure: secure, maxAge: Int(Self.lifetime))
    }

    /// The draft the browser's cookie carries for `path`, if its signature is the bank's and it is not older than `lifetime` at `now`.
    func draft(in header: String?, for path: String, now: Date) -> FormDraft? {
        guard let value = CookieHeader.raw(Self.name, in: header, maxLength: Self.maxLength),
            let dot = value.lastIndex(of: ".")
        else { return nil }
        let body = String(value[..<dot])
        let mac = String(value[value.index(after: dot)...])
        guard ConstantTime.equals(mac, signature(body)), let json = Base64URL.decode(body),
            let payload = try? JSONDecoder().decode(Payload.self, from: Data(json)), payload.path == path,
            Double(now.millis - payload.at) < Self.lifetime * 1000
        else { return nil }
        return payload.draft
    }

    /// `Set-Cookie` that removes it.
    static func cleared(secure: Bool) -> String { CookieHeader.cleared(name, secure: secure) }

    private func signature(_ body: String) -> String {
        Base64URL.encode(HMAC.authenticate(Array("trifactor-bank draft:\(body)".utf8), key: secret, algorithm: .sha256))
    }
}
