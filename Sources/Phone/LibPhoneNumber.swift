internal import CPhoneNumber

/// The only caller of the C shim over libphonenumber (`trifactor_phone.h`).
enum LibPhoneNumber {
    /// What libphonenumber made of a number that parsed, valid or not.
    struct Parsed {
        var e164: String
        var countryCallingCode: Int
        var regionCode: String
        var kind: PhoneNumber.Kind
        var isValid: Bool
    }

    /// Parses `text` with `region` (two upper-case letters) as the default region.
    ///
    /// - Throws: `PhoneNumberError` for libphonenumber's parse errors; an
    ///   internal failure of the shim (an exception inside libphonenumber) is
    ///   reported as `.notANumber`, the one reason that blames nothing specific.
    static func parse(_ text: String, region: String?) throws(PhoneNumberError) -> Parsed {
        var result = trifactor_phone_result()
        let status = trifactor_phone_parse(text, region ?? "ZZ", &result)
        switch status {
        case TRIFACTOR_PHONE_OK:
            break
        case TRIFACTOR_PHONE_INVALID_COUNTRY_CODE:
            throw PhoneNumberError(.invalidCountryCode)
        case TRIFACTOR_PHONE_TOO_SHORT:
            throw PhoneNumberError(.tooShort)
        case TRIFACTOR_PHONE_TOO_LONG:
            throw PhoneNumberError(.tooLong)
        default:  // TRIFACTOR_PHONE_NOT_A_NUMBER, TRIFACTOR_PHONE_INTERNAL_ERROR
            throw PhoneNumberError(.notANumber)
        }
        return Parsed(
            e164: string(from: result.e164),
            countryCallingCode: Int(result.country_calling_code),
            regionCode: string(from: result.region_code),
            kind: kind(for: result.type),
            isValid: result.is_valid != 0
        )
    }

    /// The NUL-terminated string in a fixed-size C `char` array (a tuple in Swift).
    private static func string<Buffer>(from buffer: Buffer) -> String {
        withUnsafeBytes(of: buffer) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    /// Our `Kind` for the shim's number type.
    private static func kind(for type: trifactor_phone_type) -> PhoneNumber.Kind {
        switch type {
        case TRIFACTOR_PHONE_TYPE_FIXED_LINE: .fixedLine
        case TRIFACTOR_PHONE_TYPE_MOBILE: .mobile
        case TRIFACTOR_PHONE_TYPE_FIXED_LINE_OR_MOBILE: .fixedLineOrMobile
        case TRIFACTOR_PHONE_TYPE_TOLL_FREE: .tollFree
        case TRIFACTOR_PHONE_TYPE_PREMIUM_RATE: .premiumRate
        case TRIFACTOR_PHONE_TYPE_SHARED_COST: .sharedCost
        case TRIFACTOR_PHONE_TYPE_VOIP: .voip
        case TRIFACTOR_PHONE_TYPE_PERSONAL_NUMBER: .personalNumber
        case TRIFACTOR_PHONE_TYPE_PAGER: .pager
        case TRIFACTOR_PHONE_TYPE_UAN: .uan
        case TRIFACTOR_PHONE_TYPE_VOICEMAIL: .voicemail
        default: .unknown
        }
    }
}
