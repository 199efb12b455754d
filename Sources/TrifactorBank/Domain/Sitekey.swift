import Foundation

/// The picture and phrase a customer chose at sign-up and sees before
/// typing their password, so they know the site is the bank's. The bank
/// shows it only on a browser it recognises as that customer's
/// (`KnownBrowsers`); every other browser, and every address that is not a
/// customer, sees the same neutral sentence, so the page cannot tell who
/// banks here. (A decoy made up for non-customers could not look like what
/// customers type: its shape gave them away.)
package struct Sitekey: Sendable, Equatable {
    /// One of `Sitekey.pictures`.
    package let picture: String
    /// 3 to 40 characters the customer typed.
    package let phrase: String

    /// The bundled pictures (`Resources/sitekeys/<name>.svg`).
    package static let pictures = [
        "anchor", "balloon", "bicycle", "cactus", "cat", "compass", "cup", "kite", "lighthouse", "moon", "mountain",
        "owl",
        "sailboat", "snowflake", "sun", "tree",
    ]

    /// Why a chosen sitekey was refused.
    package enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        case unknownPicture, phraseLength, phraseCharacters

        package var description: String {
            switch self {
            case .unknownPicture: "Pick one of the pictures."
            case .phraseLength: "The phrase has 3 to 40 characters."
            case .phraseCharacters: "The phrase has letters, digits, spaces and simple punctuation only."
            }
        }
    }

    /// A customer's choice, checked.
    package init(picture: String, phrase: String) throws(Refusal) {
        guard Self.pictures.contains(picture) else { throw .unknownPicture }
        let trimmed = phrase.trimmingCharacters(in: .whitespaces)
        guard (3...40).contains(trimmed.count) else { throw .phraseLength }
        guard
            trimmed.unicodeScalars.allSatisfy({
                CharacterSet.alphanumerics.contains($0) || " .,!?'-".unicodeScalars.contains($0)
            })
        else {
            throw .phraseCharacters
        }
        self.picture = picture
        self.phrase = trimmed
    }

    init(unchecked picture: String, phrase: String) {
        self.picture = picture
        self.phrase = phrase
    }
}
