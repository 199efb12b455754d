/// Why text could not be read as a phone number.
///
/// `description` is one sentence safe to show a user; it never echoes the input.
package struct PhoneNumberError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable reason code. Raw values go on the wire; a test pins them.
    package enum Reason: String, Sendable {
        /// The country calling code is unknown, or there is none (a national
        /// number given without a region), or the region is malformed.
        case invalidCountryCode = "invalid_country_code"
        /// The text is empty, too long, or has characters a phone number cannot.
        case notANumber = "not_a_number"
        /// Too few digits for any number.
        case tooShort = "too_short"
        /// Too many digits for any number.
        case tooLong = "too_long"
        /// It parses, but libphonenumber says it is not a valid number for its region.
        case invalid
    }

    /// Why parsing failed.
    package let reason: Reason

    /// Creates an error for `reason`.
    package init(_ reason: Reason) {
        self.reason = reason
    }

    /// One sentence for the user; leaks nothing about the input.
    package var description: String {
        switch reason {
        case .invalidCountryCode:
            "The phone number needs a valid country code, such as +1 or +44."
        case .notANumber:
            "That does not look like a phone number."
        case .tooShort:
            "The phone number is too short."
        case .tooLong:
            "The phone number is too long."
        case .invalid:
            "That is not a valid phone number."
        }
    }
}
