/// An International Bank Account Number (ISO 13616), checked as banks check
/// it: letters and digits only, the country's length, and the mod-97 check
/// digits (ISO 7064).
public struct IBAN: Sendable, Hashable, CustomStringConvertible {
    /// Upper case, no spaces.
    public let electronic: String

    /// Lengths of the countries this bank pays to.
    static let lengths: [String: Int] = [
        "AT": 20, "BE": 16, "CH": 21, "CZ": 24, "DE": 22, "DK": 18, "EE": 20, "ES": 24, "FI": 18, "FR": 27, "GB": 22, "GR": 27,
        "HR": 21, "HU": 28, "IE": 22, "IS": 26, "IT": 27, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MT": 31, "NL": 18,
        "NO": 15, "PL": 28, "PT": 25, "RO": 24, "SE": 24, "SI": 19, "SK": 24,
    ]

    /// Why an IBAN was refused, as a sentence for the form.
    public enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        case malformed, unknownCountry, wrongLength(expected: Int), checksum

        public var description: String {
            switch self {
            case .malformed: "An IBAN is letters and digits, starting with a country code, like DE89 3704 0044 0532 0130 00."
            case .unknownCountry: "Payments to that country are not supported."
            case .wrongLength(let n): "An IBAN from that country has \(n) characters."
            case .checksum: "That IBAN has a typo: its check digits do not match."
            }
        }
    }

    /// Parses a typed IBAN (spaces allowed, any case).
    public init(parsing text: String) throws(Refusal) {
        let compact = String(text.filter { $0 != " " }.uppercased())
        guard compact.count >= 5, compact.count <= 34, compact.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else { throw .malformed }
        let country = String(compact.prefix(2))
        guard country.allSatisfy(\.isLetter), compact.dropFirst(2).prefix(2).allSatisfy(\.isNumber) else { throw .malformed }
        guard let length = Self.lengths[country] else { throw .unknownCountry }
        guard compact.count == length else { throw .wrongLength(expected: length) }
        guard Self.mod97(String(compact.dropFirst(4) + compact.prefix(4))) == 1 else { throw .checksum }
        electronic = compact
    }

    /// Letters as 10…35, then the remainder mod 97, digit by digit (no big integers).
    static func mod97(_ text: String) -> Int {
        var remainder = 0
        for character in text {
            guard let ascii = character.asciiValue else { return -1 }
            let value = character.isNumber ? Int(ascii - 48) : Int(ascii - 55)
            remainder = value >= 10 ? (remainder * 100 + value) % 97 : (remainder * 10 + value) % 97
        }
        return remainder
    }

    /// Groups of four: "DE89 3704 0044 0532 0130 00".
    public var description: String {
        stride(from: 0, to: electronic.count, by: 4).map { i in
            let start = electronic.index(electronic.startIndex, offsetBy: i)
            return String(electronic[start..<(electronic.index(start, offsetBy: 4, limitedBy: electronic.endIndex) ?? electronic.endIndex)])
        }.joined(separator: " ")
    }
}
