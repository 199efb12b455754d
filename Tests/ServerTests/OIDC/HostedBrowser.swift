import Foundation
import HTTP
import ServerTestSupport

@testable import TrifactorServer

/// A browser for the hosted pages, in process: keeps cookies (every
/// `Set-Cookie`, not only the last), reads a page's forms, and posts them.
final class HostedBrowser {
    let server: TestServer
    private(set) var cookies: [String: String] = [:]

    init(_ server: TestServer) { self.server = server }

    struct Page {
        let status: Int
        let location: String?
        let body: String
        let headers: [(name: String, value: String)]

        /// The hidden and named fields of the form posting to `action`.
        func form(_ action: String) -> [String: String]? {
            guard let start = body.range(of: "action=\"\(action)\"") else { return nil }
            let rest = body[start.upperBound...]
            let end = rest.range(of: "</form>")?.lowerBound ?? rest.endIndex
            var fields: [String: String] = [:]
            let pattern = #"<input[^>]*name="([^"]+)"[^>]*value="([^"]*)""#
            let form = String(rest[..<end])
            let regex = try! NSRegularExpression(pattern: pattern)
            for m in regex.matches(in: form, range: NSRange(form.startIndex..., in: form)) {
                let name = String(form[Range(m.range(at: 1), in: form)!])
                let value = String(form[Range(m.range(at: 2), in: form)!]).replacingOccurrences(of: "&amp;", with: "&")
                fields[name] = value
            }
            return fields
        }
    }

    func request(_ method: String, _ target: String, form: [String: String]? = nil, headers: [String: String] = [:])
        -> Page
    {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var query: [String: String] = [:]
        for pair in parts.count > 1 ? parts[1].split(separator: "&") : [] {
            let field = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (t: Substring) in t.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "" }
            query[decode(field[0])] = field.count > 1 ? decode(field[1]) : ""
        }
        var fields = headers
        fields["Host"] = "op.test"
        if !cookies.isEmpty { fields["Cookie"] = cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ") }
        var body: [UInt8] = []
        if let form {
            fields["Content-Type"] = "application/x-www-form-urlencoded"
            body = Array(Self.encode(form).utf8)
        }
        let answer = server.server.respond(
            method: method, path: String(parts[0]), query: query, headers: fields, body: body,
            rawQuery: parts.count > 1 ? String(parts[1]) : "")
        for header in answer.headers where header.name.lowercased() == "set-cookie" {
            let pair = header.value.split(separator: ";")[0].split(separator: "=", maxSplits: 1)
            let name = String(pair[0])
            let value = pair.count > 1 ? String(pair[1]) : ""
            if value.isEmpty || header.value.contains("Max-Age=0") {
                cookies[name] = nil
            } else {
                cookies[name] = value
            }
        }
        return Page(
            status: answer.status,
            location: answer.headers.first { $0.name.lowercased() == "location" }?.value,
            body: String(decoding: answer.body, as: UTF8.self), headers: answer.headers)
    }

    /// Follows 303s within the provider; stops at a page or at a redirect elsewhere.
    func follow(_ page: Page) -> Page {
        var page = page
        while page.status == 303, let location = page.location, location.hasPrefix("/") {
            page = request("GET", location)
        }
        return page
    }

    static func encode(_ form: [String: String]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return form.sorted { $0.key < $1.key }.map {
            "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")"
        }.joined(separator: "&")
    }

    /// The query of a URL as a dictionary.
    static func query(_ url: String) -> [String: String] {
        var out: [String: String] = [:]
        for item in URLComponents(string: url)?.queryItems ?? [] { out[item.name] = item.value ?? "" }
        return out
    }

    /// A JWT's claims, unverified (the test checks what was issued, the provider's own checks are tested elsewhere).
    static func claims(_ jwt: String) -> [String: Any] {
        let part = String(jwt.split(separator: ".")[1])
        var b64 = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while b64.count % 4 != 0 { b64 += "=" }
        return (try? JSONSerialization.jsonObject(with: Data(base64Encoded: b64) ?? Data())) as? [String: Any] ?? [:]
    }
}
