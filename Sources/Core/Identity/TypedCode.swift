import Foundation

/// A one-time code as a person types it: from a text message, an email or an
/// authenticator app, with the spaces and dashes people put between groups
/// (`123 456`, `1234-5678`), pasted with a trailing newline, or typed on a
/// keyboard that gives full-width digits (`１２３４５６`) or the digits of
/// its script (Arabic `٤٨٢٠`, Persian `۴۸۲۰`, Devanagari `४८२०`: Trifactor
/// speaks those languages). All of those are the code. Normalising first
/// means a typo of form never costs one of the few attempts a code has.
package enum TypedCode {
    /// `raw` in NFKC (full-width digits and letters folded to ASCII), every
    /// decimal digit of any script as its ASCII digit, without white space
    /// (any kind) or dashes and hyphens (Unicode `Pd`).
    package static func normalize(_ raw: String) -> String {
        let folded = raw.precomposedStringWithCompatibilityMapping
        return String(
            String.UnicodeScalarView(
                folded.unicodeScalars.compactMap { scalar -> UnicodeScalar? in
                    let properties = scalar.properties
                    if properties.isWhitespace || properties.generalCategory == .dashPunctuation { return nil }
                    if properties.generalCategory == .decimalNumber, let value = properties.numericValue,
                        (0...9).contains(value)
                    {
                        return UnicodeScalar(UInt8(ascii: "0") + UInt8(value))
                    }
                    return scalar
                }))
    }

    /// The normalised code when it is exactly `count` ASCII digits; nil for
    /// anything else (a code of the wrong shape, which should cost no attempt).
    package static func digits(_ raw: String, count: Int) -> String? {
        let code = normalize(raw)
        return code.utf8.count == count && code.utf8.allSatisfy({ (0x30...0x39).contains($0) }) ? code : nil
    }
}
