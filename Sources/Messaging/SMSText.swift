/// How long an SMS is: GSM-7 (160 characters in one segment, 153 per
/// segment when concatenated; `^{}\[~]|€` and form feed take two) or, with
/// any other character, UCS-2 (70, then 67 UTF-16 units per segment).
package enum SMSText {
    /// The encoding a text needs.
    package enum Encoding: String, Sendable { case gsm7, ucs2 }

    static let basic: Set<Character> = Set(
        "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
    )
    static let extended: Set<Character> = Set("^{}\\[~]|€\u{0C}")

    /// The encoding and the number of segments `text` takes.
    package static func segments(_ text: String) -> (encoding: Encoding, count: Int) {
        var septets = 0
        for character in text {
            if basic.contains(character) {
                septets += 1
            } else if extended.contains(character) {
                septets += 2
            } else {
                let units = text.utf16.count
                return (.ucs2, units <= 70 ? 1 : (units + 66) / 67)
            }
        }
        return (.gsm7, septets <= 160 ? 1 : (septets + 152) / 153)
    }

    /// `required` joined with as many of `optional` (in order) as fit in
    /// `maxSegments`; optional parts are dropped from the end first. The
    /// required parts (the code among them) are always kept, even if they
    /// alone need more segments.
    package static func fit(required: [String], optional: [String], maxSegments: Int) -> String {
        var kept = optional
        while true {
            let text = (required + kept).joined(separator: " ")
            if kept.isEmpty || segments(text).count <= maxSegments { return text }
            kept.removeLast()
        }
    }
}
