import Phone
import Testing

/// Numbers below are libphonenumber 8.12's own example numbers
/// (`PhoneNumberUtil::GetExampleNumberForType`) or checked against it.
@Suite("Parsing phone numbers")
struct PhoneNumberParsingTests {
    @Test("a US number in E.164 parses to its E.164 form, country code and region")
    func usE164() throws {
        let number = try PhoneNumber(parsing: "+14155550100")
        #expect(number.e164 == "+14155550100")
        #expect(number.digits == "14155550100")
        #expect(number.countryCallingCode == 1)
        #expect(number.regionCode == "US")
        #expect(number.kind == .fixedLineOrMobile)
    }

    @Test("a US national number with region US gives the same number as its E.164 form")
    func usNational() throws {
        let national = try PhoneNumber(parsing: "(415) 555-0100", region: "US")
        #expect(national == (try PhoneNumber(parsing: "+14155550100")))
        #expect(national.e164 == "+14155550100")
    }

    @Test("a lower-case region is accepted")
    func lowerCaseRegion() throws {
        let number = try PhoneNumber(parsing: "415.555.0100", region: "us")
        #expect(number.e164 == "+14155550100")
    }

    @Test("E.164 digits without the plus, as Vonage sends them, parse as international")
    func vonageDigits() throws {
        let us = try PhoneNumber(parsing: "14155550100")
        #expect(us.e164 == "+14155550100")
        let gb = try PhoneNumber(parsing: "447400123456")
        #expect(gb.e164 == "+447400123456")
        #expect(gb.regionCode == "GB")
    }

    @Test("digits with a region are read as a national number of that region")
    func digitsWithRegion() throws {
        let number = try PhoneNumber(parsing: "07400123456", region: "GB")
        #expect(number.e164 == "+447400123456")
    }

    @Test("punctuated international input parses to plain E.164")
    func punctuation() throws {
        for text in ["+1-415-555-0100", "+1.415.555.0100", "+1 (415) 555 0100", "+44 (0) 7400 123456"] {
            let number = try PhoneNumber(parsing: text)
            #expect(number.e164 == (text.hasPrefix("+44") ? "+447400123456" : "+14155550100"), "\(text)")
        }
    }

    @Test("a UK mobile is a mobile and can receive SMS")
    func gbMobile() throws {
        let number = try PhoneNumber(parsing: "+44 7400 123456")
        #expect(number.e164 == "+447400123456")
        #expect(number.countryCallingCode == 44)
        #expect(number.regionCode == "GB")
        #expect(number.kind == .mobile)
        #expect(number.canReceiveSMS)
    }

    @Test("a UK landline is a fixed line and cannot receive SMS")
    func gbFixedLine() throws {
        let number = try PhoneNumber(parsing: "+44 121 234 5678")
        #expect(number.kind == .fixedLine)
        #expect(!number.canReceiveSMS)
    }

    @Test("a German landline is a fixed line in region DE")
    func deFixedLine() throws {
        let number = try PhoneNumber(parsing: "030 123456", region: "DE")
        #expect(number.e164 == "+4930123456")
        #expect(number.countryCallingCode == 49)
        #expect(number.regionCode == "DE")
        #expect(number.kind == .fixedLine)
    }

    @Test("a US toll-free number cannot receive SMS")
    func usTollFree() throws {
        let number = try PhoneNumber(parsing: "+1 800 234 5678")
        #expect(number.kind == .tollFree)
        #expect(!number.canReceiveSMS)
    }

    @Test("a non-geographic freephone number has region 001")
    func nonGeographic() throws {
        let number = try PhoneNumber(parsing: "+800 1234 5678")
        #expect(number.regionCode == "001")
        #expect(number.countryCallingCode == 800)
        #expect(number.kind == .tollFree)
    }

    @Test(
        "each kind of number is classified, and only SMS-capable kinds can receive SMS",
        arguments: [
            ("+441212345678", PhoneNumber.Kind.fixedLine, false),
            ("+447400123456", .mobile, true),
            ("+12015550123", .fixedLineOrMobile, true),
            ("+18002345678", .tollFree, false),
            ("+19002345678", .premiumRate, false),
            ("+4918012345", .sharedCost, false),
            ("+445612345678", .voip, true),
            ("+447012345678", .personalNumber, true),
            ("+447640123456", .pager, true),
            ("+445512345678", .uan, false),
            ("+49177991234567", .voicemail, false),
        ]
    )
    func kinds(text: String, kind: PhoneNumber.Kind, canReceiveSMS: Bool) throws {
        let number = try PhoneNumber(parsing: text)
        #expect(number.kind == kind)
        #expect(number.canReceiveSMS == canReceiveSMS)
    }

    @Test("a masked number shows only the plus and the last four digits")
    func masking() throws {
        #expect(try PhoneNumber(parsing: "+14155550100").masked == "+*******0100")
        #expect(try PhoneNumber(parsing: "+447400123456").masked == "+********3456")
        #expect(try PhoneNumber(parsing: "+4930123456").masked == "+******3456")
    }

    @Test("kind raw values are stable wire codes")
    func kindWireCodes() {
        let codes = [
            PhoneNumber.Kind.fixedLine, .mobile, .fixedLineOrMobile, .tollFree, .premiumRate, .sharedCost,
            .voip, .personalNumber, .pager, .uan, .voicemail, .unknown,
        ].map(\.rawValue)
        #expect(
            codes == [
                "fixed_line", "mobile", "fixed_line_or_mobile", "toll_free", "premium_rate", "shared_cost",
                "voip", "personal_number", "pager", "uan", "voicemail", "unknown",
            ])
    }
}
