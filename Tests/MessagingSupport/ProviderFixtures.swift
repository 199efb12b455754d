package import Messaging

/// Provider accounts read from their URLs, with secret files served from memory.
package enum ProviderFixtures {
    /// The secret files a test account may name: `/s` and `/t` hold a secret, `/empty` only a newline.
    package static let files = ["/s": "secret\n", "/t": "token", "/empty": "\n"]

    /// The account `text` names (`vonage://KEY@?from=…&secret_file=/s`), its secret files read from `files`.
    /// - Throws: `ProviderAccount.Invalid` for a URL that cannot work.
    package static func parse(_ text: String) throws(ProviderAccount.Invalid) -> ProviderAccount {
        try ProviderAccount.parse(text, readFile: { files[$0] })
    }
}
