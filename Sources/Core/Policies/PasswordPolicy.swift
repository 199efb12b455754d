import Foundation

/// NIST SP 800-63B §3.1.1.2 rules for a new password: length limits counted
/// after NFKC normalisation, any Unicode accepted, no composition rules, and a
/// blocklist of commonly used passwords plus context words (the email).
package struct PasswordPolicy: Sendable {
    /// Why a password was refused. The raw values are stable wire reasons.
    package enum Violation: String, Sendable, Equatable {
        case tooShort = "too_short"
        case tooLong = "too_long"
        case common = "common"
        case contextual = "contains_email"
    }

    /// Fewest characters accepted (NIST: at least 8).
    package let minimumLength: Int
    /// Most characters accepted.
    package let maximumLength: Int
    private let blocklist: Set<String>
    private let dictionary: (@Sendable (String) -> Bool)?

    /// A policy with the given blocklist (compared case-insensitively), and a
    /// dictionary of words and breached passwords that also says whether a
    /// password is one in disguise (the server's is cracklib's).
    package init(
        minimumLength: Int = 8, maximumLength: Int = 256, blocklist: some Sequence<String>,
        dictionary: (@Sendable (String) -> Bool)? = nil
    ) {
        self.minimumLength = minimumLength
        self.maximumLength = maximumLength
        self.blocklist = Set(blocklist.map { $0.lowercased() })
        self.dictionary = dictionary
    }

    /// The form that is hashed and compared: NFKC (so the same password typed
    /// on different keyboards gives the same bytes).
    package static func normalize(_ password: String) -> String {
        password.precomposedStringWithCompatibilityMapping
    }

    /// Checks a new password for the account `email`; nil when acceptable.
    package func violation(_ password: String, email: EmailAddress?) -> Violation? {
        let normalized = Self.normalize(password)
        let length = normalized.count
        if length < minimumLength { return .tooShort }
        if length > maximumLength { return .tooLong }
        let lowered = normalized.lowercased()
        if blocklist.contains(lowered) || dictionary?(normalized) == true { return .common }
        if let email, lowered == email.value.lowercased() || lowered == email.localPart.lowercased() {
            return .contextual
        }
        return nil
    }

    /// A human sentence for a violation, safe to show.
    package func explain(_ violation: Violation) -> String {
        switch violation {
        case .tooShort: "must be at least \(minimumLength) characters"
        case .tooLong: "must be at most \(maximumLength) characters"
        case .common: "is too common: it appears in lists of passwords attackers try first"
        case .contextual: "must not be your email address"
        }
    }
}
