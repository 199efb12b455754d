import Foundation

/// The common-password blocklist shipped with Trifactor (Openwall's
/// public-domain list, as Debian ships it).
enum CommonPasswords {
    /// The list's entries.
    /// - Throws: `ResourceFailure` when the list is missing or empty: sign-up
    ///   must not quietly accept the passwords it was meant to refuse.
    static func load() throws -> [String] {
        guard let url = Bundle.module.url(forResource: "common-passwords", withExtension: "txt"),
              let text = try? String(contentsOf: url, encoding: .utf8)
        else { throw ResourceFailure(description: "The resource common-passwords.txt is missing from trifactord's bundle: reinstall it.") }
        let entries = text.split(whereSeparator: \.isNewline).map(String.init)
        guard !entries.isEmpty else { throw ResourceFailure(description: "The resource common-passwords.txt is empty: reinstall trifactord.") }
        return entries
    }
}
