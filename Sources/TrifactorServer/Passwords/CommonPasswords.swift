package import Core
import Foundation

/// The common-password blocklist shipped with Trifactor (Openwall's
/// public-domain list, as Debian ships it), and with cracklib's dictionary
/// the policy every new password meets.
package enum CommonPasswords {
    /// The password policy: the bundled list and the cracklib dictionary at `dictionary`.
    /// - Throws: `ResourceFailure` when either is missing: a new password must
    ///   never quietly skip the check.
    package static func policy(dictionary path: String = PasswordDictionary.defaultPath) throws -> PasswordPolicy {
        let dictionary = try PasswordDictionary.open(path: path)
        return PasswordPolicy(blocklist: try load(), dictionary: { dictionary.contains($0) })
    }

    /// The list's entries.
    /// - Throws: `ResourceFailure` when the list is missing or empty: sign-up
    ///   must not quietly accept the passwords it was meant to refuse.
    static func load() throws -> [String] {
        guard let url = Bundle.module.url(forResource: "common-passwords", withExtension: "txt"),
            let text = try? String(contentsOf: url, encoding: .utf8)
        else {
            throw ResourceFailure(
                description: "The resource common-passwords.txt is missing from trifactord's bundle: reinstall it.")
        }
        let entries = text.split(whereSeparator: \.isNewline).map(String.init)
        guard !entries.isEmpty else {
            throw ResourceFailure(description: "The resource common-passwords.txt is empty: reinstall trifactord.")
        }
        return entries
    }
}
