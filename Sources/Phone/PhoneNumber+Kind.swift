extension PhoneNumber {
    /// The kind of line a number is, mirroring libphonenumber's `PhoneNumberType`.
    ///
    /// Raw values are stable wire and storage codes; a test pins them.
    package enum Kind: String, Sendable {
        /// A landline.
        case fixedLine = "fixed_line"
        /// A mobile phone.
        case mobile
        /// Either; the digits cannot tell (all US and Canadian numbers).
        case fixedLineOrMobile = "fixed_line_or_mobile"
        /// Freephone: the callee pays.
        case tollFree = "toll_free"
        /// Premium-rate: the caller pays extra.
        case premiumRate = "premium_rate"
        /// Cost shared between caller and callee.
        case sharedCost = "shared_cost"
        /// Voice over IP (including TSoIP).
        case voip
        /// A personal number that forwards to a mobile or fixed line.
        case personalNumber = "personal_number"
        /// A pager.
        case pager
        /// A Universal Access (company) number.
        case uan
        /// A voicemail access number.
        case voicemail
        /// The digits fit no known pattern for the region.
        case unknown
    }
}
