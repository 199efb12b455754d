import Foundation

/// An amount of money in integer minor units (cents): no floating point
/// anywhere, from the form field to the ledger.
package struct Amount: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Minor units (cents); negative only for debits inside the ledger.
    package let minorUnits: Int64
    /// ISO 4217 code; every currency here has two decimals.
    package let currency: String

    /// The largest amount a customer may type: 999,999,999.99.
    package static let maximumMinorUnits: Int64 = 99_999_999_999

    package init(minorUnits: Int64, currency: String) {
        self.minorUnits = minorUnits
        self.currency = currency
    }

    /// Why a typed amount was refused, as a sentence for the form.
    package enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        case notANumber, notPositive, tooManyDecimals, tooLarge

        package var description: String {
            switch self {
            case .notANumber: "Enter an amount like 250 or 250.00."
            case .notPositive: "Enter an amount above zero."
            case .tooManyDecimals: "Use at most two decimals."
            case .tooLarge: "That amount is too large."
            }
        }
    }

    /// A positive amount typed by a customer: digits, an optional `.` or `,`
    /// and at most two decimals; thousands separators and spaces are not taken.
    package init(parsing text: String, currency: String) throws(Refusal) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { throw .notANumber }
        if trimmed.hasPrefix("-") { throw .notPositive }
        let parts = trimmed.split(separator: trimmed.contains(",") ? "," : ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, let whole = parts.first, !whole.isEmpty, whole.allSatisfy({ $0.isASCII && $0.isNumber })
        else { throw .notANumber }
        let fraction = parts.count == 2 ? parts[1] : ""
        guard fraction.allSatisfy({ $0.isASCII && $0.isNumber }), parts.count == 1 || !fraction.isEmpty else {
            throw .notANumber
        }
        guard fraction.count <= 2 else { throw .tooManyDecimals }
        guard whole.count <= 12, let units = Int64(whole) else { throw .tooLarge }
        let cents = Int64(fraction.padding(toLength: 2, withPad: "0", startingAt: 0)) ?? 0
        let total = units * 100 + cents
        guard total > 0 else { throw .notPositive }
        guard total <= Self.maximumMinorUnits else { throw .tooLarge }
        self.init(minorUnits: total, currency: currency)
    }

    /// "250.00": the form a bound action states (no grouping, two decimals).
    package var plain: String {
        let sign = minorUnits < 0 ? "-" : ""
        let magnitude = minorUnits.magnitude
        let cents = magnitude % 100
        return "\(sign)\(magnitude / 100).\(cents < 10 ? "0" : "")\(cents)"
    }

    /// "EUR 1,234.50" for people.
    package var description: String {
        let sign = minorUnits < 0 ? "−" : ""
        let magnitude = minorUnits.magnitude
        var whole = String(magnitude / 100)
        var grouped = ""
        while whole.count > 3 {
            grouped = "," + whole.suffix(3) + grouped
            whole.removeLast(3)
        }
        let cents = magnitude % 100
        return "\(currency) \(sign)\(whole)\(grouped).\(cents < 10 ? "0" : "")\(cents)"
    }

    package static func < (a: Amount, b: Amount) -> Bool { a.minorUnits < b.minorUnits }
}
