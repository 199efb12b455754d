import Foundation

/// The picture and phrase a user chose and sees before typing their
/// password, so they know the site is genuine. Trifactor keeps it per
/// account; its hosted sign-in (and the bank's own password page) shows it
/// only on a browser recognised for that account (`RecognisedBrowsers`);
/// every other browser, and every address that is no account, sees the same
/// neutral sentence, so the page cannot tell who has an account. (A decoy
/// made up for unknown addresses could not look like what people type: its
/// shape gave them away.)
package struct Sitekey: Sendable, Equatable {
    /// One of `Sitekey.pictures`.
    package let picture: String
    /// 3 to 40 characters the user typed.
    package let phrase: String

    /// The bundled pictures (`Resources/sitekeys/<name>.svg`, served by `SitekeyPictures`): the allow-list of names.
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

    /// A user's choice, checked: the picture one of `pictures`, the phrase trimmed of spaces.
    /// - Throws: the `Refusal` that says what to change.
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

    /// A sitekey read back from storage, checked when it was stored.
    package init(unchecked picture: String, phrase: String) {
        self.picture = picture
        self.phrase = phrase
    }
}
