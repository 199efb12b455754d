/// An International Bank Account Number (ISO 13616), checked as banks check
/// it: letters and digits only, the country's length, and the mod-97 check
/// digits (ISO 7064).
package struct IBAN: Sendable, Hashable, CustomStringConvertible {
    /// Upper case, no spaces.
    package let electronic: String

    /// Lengths of the countries this bank pays to.
    static let lengths: [String: Int] = [
        "AT": 20, "BE": 16, "CH": 21, "CZ": 24, "DE": 22, "DK": 18, "EE": 20, "ES": 24, "FI": 18, "FR": 27, "GB": 22,
        "GR": 27,
        "HR": 21, "HU": 28, "IE": 22, "IS": 26, "IT": 27, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MT": 31,
        "NL": 18,
        "NO": 15, "PL": 28, "PT": 25, "RO": 24, "SE": 24, "SI": 19, "SK": 24,
    ]

    /// Why an IBAN was refused, as a sentence for the form.
    package enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        case malformed, unknownCountry
        case wrongLength(expected: Int)
        case checksum

        package var description: String {
            switch self {
            case .malformed:
                "An IBAN is letters and digits, starting with a country code, like DE89 3704 0044 0532 0130 00."
            case .unknownCountry: "Payments to that country are not supported."
            case .wrongLength(let n): "An IBAN from that country has \(n) characters."
            case .checksum: "That IBAN has a typo: its check digits do not match."
            }
        }
    }

    /// Parses a typed IBAN (spaces allowed, any case).
    package init(parsing text: String) throws(Refusal) {
        let compact = String(text.filter { $0 != " " }.uppercased())
        guard compact.count >= 5, compact.count <= 34,
            compact.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
        else { throw .malformed }
        let country = String(compact.prefix(2))
        guard country.allSatisfy(\.isLetter), compact.dropFirst(2).prefix(2).allSatisfy(\.isNumber) else {
            throw .malformed
        }
        guard let length = Self.lengths[country] else { throw .unknownCountry }
        guard compact.count == length else { throw .wrongLength(expected: length) }
        guard Self.mod97(String(compact.dropFirst(4) + compact.prefix(4))) == 1 else { throw .checksum }
        electronic = compact
    }

    /// Trifactor Bank's demo IBAN for account number `account` (ten digits): Dutch in form (`NLkk TRFB 0123 4567 89`,
    /// a bank code no real bank uses), with check digits that pass the mod-97 test like any real one.
    package static func demo(account: String) -> IBAN {
        precondition(account.count == 10 && account.allSatisfy { $0.isASCII && $0.isNumber }, "ten digits")
        let bban = "TRFB" + account
        let check = 98 - mod97(bban + "NL00")
        // Built from digits and letters only, with the right length and check digits: it parses.
        return try! IBAN(parsing: "NL\(check < 10 ? "0" : "")\(check)" + bban)
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
    package var description: String { electronic.grouped(by: 4) }
}

extension String {
    /// The text in groups of `size` characters, a space between them ("DE89 3704 0044", "JBSW Y3DP").
    func grouped(by size: Int) -> String {
        stride(from: 0, to: count, by: size).map { i in
            let start = index(startIndex, offsetBy: i)
            return String(self[start..<(index(start, offsetBy: size, limitedBy: endIndex) ?? endIndex)])
        }.joined(separator: " ")
    }
}
