import Foundation

/// An email address, normalised: surrounding white space trimmed and the
/// domain lower-cased. The local part keeps its case (RFC 5321 lets servers
/// treat it as case-sensitive), so `Ann@Example.COM` becomes `Ann@example.com`.
package struct EmailAddress: Sendable, Hashable, CustomStringConvertible {
    /// The normalised address.
    package let value: String

    /// Normalises and validates `raw`; nil when it is not a plausible address:
    /// one `@`, a local part of 1–64 printable characters without spaces, a
    /// domain of dot-separated labels (letters, digits, hyphens, at least one dot),
    /// 254 characters at most in all.
    package init?(_ raw: String) {
        let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = trimmed.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, trimmed.count <= 254 else { return nil }
        let local = String(parts[0])
        let domain = String(parts[1]).lowercased()
        guard (1...64).contains(local.utf8.count),
            local.unicodeScalars.allSatisfy({
                $0.value > 0x20 && $0.value != 0x7f && !"()<>[]\\,;:\"".unicodeScalars.contains($0)
            }),
            !local.hasPrefix("."), !local.hasSuffix("."), !local.contains("..")
        else { return nil }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, domain.utf8.count <= 253,
            labels.allSatisfy({ label in
                (1...63).contains(label.count) && !label.hasPrefix("-") && !label.hasSuffix("-")
                    && label.unicodeScalars.allSatisfy {
                        $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-"
                    }
            }),
            let tld = labels.last, !tld.allSatisfy(\.isNumber)
        else { return nil }
        value = local + "@" + domain
    }

    /// The part before `@`.
    package var localPart: String { String(value.split(separator: "@")[0]) }

    package var description: String { value }
}
