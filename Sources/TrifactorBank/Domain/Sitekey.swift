import Crypto
import Foundation

/// The picture and phrase a customer chose at sign-up and sees before
/// typing their password, so they know the site is the bank's. For an
/// address that is not a customer the bank shows a picture and phrase
/// derived from the address with a server secret (HMAC-SHA256): the same
/// every time, and telling an attacker nothing about who banks here.
public struct Sitekey: Sendable, Equatable {
    /// One of `Sitekey.pictures`.
    public let picture: String
    /// 3 to 40 characters the customer typed.
    public let phrase: String

    /// The bundled pictures (`Resources/sitekeys/<name>.svg`).
    public static let pictures = ["anchor", "balloon", "bicycle", "cactus", "cat", "compass", "cup", "kite", "lighthouse", "moon", "mountain", "owl",
                                  "sailboat", "snowflake", "sun", "tree"]

    /// Words for derived phrases: "amber harbour", "quiet meadow"…
    static let adjectives = ["amber", "brave", "calm", "distant", "early", "golden", "hidden", "ivory", "jolly", "kind", "lucky", "misty",
                             "northern", "quiet", "rapid", "silver", "tiny", "velvet", "wild", "young"]
    static let nouns = ["harbour", "meadow", "river", "lantern", "garden", "island", "valley", "orchard", "bridge", "canyon", "forest", "glacier",
                        "market", "planet", "rocket", "signal", "thunder", "violin", "window", "zephyr"]

    /// Why a chosen sitekey was refused.
    public enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        case unknownPicture, phraseLength, phraseCharacters

        public var description: String {
            switch self {
            case .unknownPicture: "Pick one of the pictures."
            case .phraseLength: "The phrase has 3 to 40 characters."
            case .phraseCharacters: "The phrase has letters, digits, spaces and simple punctuation only."
            }
        }
    }

    /// A customer's choice, checked.
    public init(picture: String, phrase: String) throws(Refusal) {
        guard Self.pictures.contains(picture) else { throw .unknownPicture }
        let trimmed = phrase.trimmingCharacters(in: .whitespaces)
        guard (3...40).contains(trimmed.count) else { throw .phraseLength }
        guard trimmed.unicodeScalars.allSatisfy({ CharacterSet.alphanumerics.contains($0) || " .,!?'-".unicodeScalars.contains($0) }) else {
            throw .phraseCharacters
        }
        self.picture = picture
        self.phrase = trimmed
    }

    init(unchecked picture: String, phrase: String) {
        self.picture = picture
        self.phrase = phrase
    }

    /// The decoy for an address that is not a customer: stable per address and secret.
    public static func decoy(for email: String, secret: [UInt8]) -> Sitekey {
        let mac = HMAC.authenticate(Array(email.lowercased().utf8), key: secret, algorithm: .sha256)
        let picture = pictures[Int(mac[0]) % pictures.count]
        let phrase = "\(adjectives[Int(mac[1]) % adjectives.count]) \(nouns[Int(mac[2]) % nouns.count])"
        return Sitekey(unchecked: picture, phrase: phrase)
    }
}
