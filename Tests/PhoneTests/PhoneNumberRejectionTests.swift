import Phone
import Testing

@Suite("Rejecting what is not a phone number")
struct PhoneNumberRejectionTests {
    /// The reason `PhoneNumber(parsing:region:)` gives for rejecting `text`, or nil if it parsed.
    private func reason(_ text: String, region: String? = nil) -> PhoneNumberError.Reason? {
        do {
            _ = try PhoneNumber(parsing: text, region: region)
            return nil
        } catch {
            return error.reason
        }
    }

    @Test("an unknown country calling code is an invalid country code")
    func unknownCountryCode() {
        #expect(reason("+999 1234") == .invalidCountryCode)
    }

    @Test("a national number without a region is an invalid country code")
    func nationalWithoutRegion() {
        #expect(reason("(415) 555-0100") == .invalidCountryCode)
    }

    @Test("a region that is not two ASCII letters is an invalid country code")
    func malformedRegion() {
        for region in ["USA", "U", "", "1A", "Ü1"] {
            #expect(reason("(415) 555-0100", region: region) == .invalidCountryCode, "\(region)")
        }
    }

    @Test("too few digits after the country code is too short")
    func tooShort() {
        #expect(reason("+44 1") == .tooShort)
    }

    @Test("too many digits after the country code is too long")
    func tooLong() {
        #expect(reason("+1 4155550100 99999999") == .tooLong)
    }

    @Test("a number that parses but is not valid for its region is invalid")
    func invalid() {
        #expect(reason("+1 011 555 0100") == .invalid)  // NANP area codes never start with 0
        #expect(reason("+44 7400 12345") == .invalid)  // a UK mobile a digit short
    }

    @Test("letters are not a number")
    func letters() {
        #expect(reason("+1 800 FLOWERS") == .notANumber)
        #expect(reason("call me") == .notANumber)
    }

    @Test("the empty string is not a number")
    func empty() {
        #expect(reason("") == .notANumber)
        #expect(reason("   ") == .notANumber)
        #expect(reason("()-.") == .notANumber)
    }

    @Test("text longer than 64 characters is not a number, even if all digits")
    func overlong() {
        let sixtyFive = "+" + String(repeating: "1", count: 64)
        #expect(sixtyFive.count == 65)
        #expect(reason(sixtyFive) == .notANumber)
    }

    @Test("characters outside digits, spaces and +-(). are not a number")
    func strayCharacters() {
        for text in ["+14155550100\0", "+1 415 555 0100 ext. 12", "+1/415/555/0100", "+1\t4155550100", "+١٤١٥٥٥٥٠١٠٠"] {
            #expect(reason(text) == .notANumber, "\(text.debugDescription)")
        }
    }

    @Test("error reasons are stable wire codes")
    func reasonWireCodes() {
        let codes = [
            PhoneNumberError.Reason.invalidCountryCode, .notANumber, .tooShort, .tooLong, .invalid,
        ].map(\.rawValue)
        #expect(codes == ["invalid_country_code", "not_a_number", "too_short", "too_long", "invalid"])
    }

    @Test("error descriptions are one sentence each and never echo the input")
    func descriptions() {
        let input = "+999 1234"
        let reasons: [PhoneNumberError.Reason] = [.invalidCountryCode, .notANumber, .tooShort, .tooLong, .invalid]
        for reason in reasons {
            let description = PhoneNumberError(reason).description
            #expect(description.hasSuffix("."))
            #expect(!description.contains(input))
            #expect(!description.contains("1234"))
        }
        #expect(Set(reasons.map { PhoneNumberError($0).description }).count == reasons.count)
    }
}
