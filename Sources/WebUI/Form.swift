import Foundation

/// An `application/x-www-form-urlencoded` body, as a browser posts a form.
package struct Form: Sendable {
    private var values: [String: String] = [:]
    /// The names sent more than once (a repeated OAuth parameter is an error, RFC 6749 §3.1).
    package private(set) var repeated: Set<String> = []

    /// Parses `body`; a repeated field keeps its first value; at most 64 fields of 4 KiB.
    package init(_ body: [UInt8]) {
        let text = String(decoding: body.prefix(64 * 1024), as: UTF8.self)
        for pair in text.split(separator: "&").prefix(64) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decode(parts[0]) else { continue }
            guard values[name] == nil else {
                repeated.insert(name)
                continue
            }
            let value = parts.count == 2 ? Self.decode(parts[1]) ?? "" : ""
            values[name] = String(value.prefix(4096))
        }
    }

    /// The field `name`, trimmed; nil when absent.
    package subscript(_ name: String) -> String? { values[name]?.trimmingCharacters(in: .whitespacesAndNewlines) }

    /// Every field exactly as sent, the first value of each.
    package var fields: [String: String] { values }

    /// The field exactly as sent (passwords: spaces are part of them).
    package func raw(_ name: String) -> String? { values[name] }

    private static func decode(_ part: Substring) -> String? {
        part.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}
