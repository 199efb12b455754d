/// A phone number parsed and validated by libphonenumber.
///
/// Values only exist for numbers libphonenumber considers valid for their
/// region, so holding a `PhoneNumber` means the number is well-formed E.164.
/// Two values are equal when they describe the same number, however it was typed.
package struct PhoneNumber: Sendable, Hashable {
    /// The number in E.164 form, e.g. `"+14155550100"`.
    package let e164: String
    /// The country calling code, e.g. `1` for the US and Canada, `44` for the UK.
    package let countryCallingCode: Int
    /// The ISO 3166 region the number belongs to, e.g. `"US"`; `"001"` for
    /// non-geographic numbers (such as +800 freephone), `"ZZ"` when unknown.
    package let regionCode: String
    /// What kind of line the number is, as far as its digits tell.
    package let kind: Kind

    /// The E.164 digits without the leading `"+"`, e.g. `"14155550100"`: the
    /// form Vonage sends and expects on the wire.
    package var digits: String { String(e164.drop { $0 == "+" }) }

    /// Whether an SMS can plausibly reach the number: true for mobile,
    /// fixed-line-or-mobile (US and Canadian numbers cannot be told apart),
    /// VoIP, personal and pager numbers; false for fixed lines, toll-free,
    /// premium-rate, shared-cost, UAN, voicemail and unknown numbers.
    package var canReceiveSMS: Bool {
        switch kind {
        case .mobile, .fixedLineOrMobile, .voip, .personalNumber, .pager:
            true
        case .fixedLine, .tollFree, .premiumRate, .sharedCost, .uan, .voicemail, .unknown:
            false
        }
    }

    /// The number with every digit but the last four replaced by `"*"`, e.g.
    /// `"+*******0100"`: safe for logs and for telling users where a code went.
    package var masked: String {
        let digits = self.digits
        let hidden = max(digits.count - 4, 0)
        return "+" + String(repeating: "*", count: hidden) + digits.dropFirst(hidden)
    }

    /// Parses and validates a phone number.
    ///
    /// Accepts:
    /// - E.164, `"+14155550100"` (spaces, `-`, `.` and parentheses allowed);
    /// - E.164 digits without the plus, as Vonage sends them, `"14155550100"`:
    ///   a string of only digits with no `region` is read as if it began with `"+"`;
    /// - a national number with its region, `"(415) 555-0100"` with `"US"`.
    ///
    /// - Parameters:
    ///   - text: What the user or the SMS provider gave; at most 64 characters of
    ///     digits, spaces and `+-().`.
    ///   - region: Two ASCII letters (any case), e.g. `"US"`, used for numbers
    ///     without a leading `"+"`; `nil` when the number must be international.
    /// - Throws: `PhoneNumberError` with reason `.notANumber` for empty, overlong
    ///   or oddly-charactered text; `.invalidCountryCode` for an unknown country
    ///   code, a malformed `region`, or a national number without a region;
    ///   `.tooShort` or `.tooLong` for the wrong number of digits; `.invalid` when
    ///   it parses but is not a valid number for its region.
    package init(parsing text: String, region: String? = nil) throws(PhoneNumberError) {
        guard Self.isPlausible(text) else { throw PhoneNumberError(.notANumber) }
        let normalizedRegion: String?
        if let region {
            guard let upper = Self.normalizedRegion(region) else {
                throw PhoneNumberError(.invalidCountryCode)
            }
            normalizedRegion = upper
        } else {
            normalizedRegion = nil
        }
        let isBareDigits = text.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        let input = normalizedRegion == nil && isBareDigits ? "+" + text : text

        let parsed = try LibPhoneNumber.parse(input, region: normalizedRegion)
        guard parsed.isValid else { throw PhoneNumberError(.invalid) }
        self.e164 = parsed.e164
        self.countryCallingCode = parsed.countryCallingCode
        self.regionCode = parsed.regionCode
        self.kind = parsed.kind
    }

    /// The longest text `init(parsing:region:)` looks at.
    static let maximumLength = 64

    /// Whether `text` is non-empty, short enough, and only digits, spaces and `+-().`.
    static func isPlausible(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= maximumLength else { return false }
        return text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: " "), UInt8(ascii: "+"), UInt8(ascii: "-"),
                UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "."):
                true
            default:
                false
            }
        }
    }

    /// `region` upper-cased if it is exactly two ASCII letters, else `nil`.
    static func normalizedRegion(_ region: String) -> String? {
        let bytes = Array(region.utf8)
        guard bytes.count == 2 else { return nil }
        var upper: [UInt8] = []
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): upper.append(byte)
            case UInt8(ascii: "a")...UInt8(ascii: "z"): upper.append(byte - 32)
            default: return nil
            }
        }
        return String(decoding: upper, as: UTF8.self)
    }
}
