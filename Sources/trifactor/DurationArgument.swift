import CommandLineKit
import Foundation

/// "5m", "90s", "1h", "300" → seconds.
func parseDuration(_ text: String) throws(UsageError) -> TimeInterval {
    let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600]
    var digits = Substring(text)
    var unit = 1.0
    if let last = text.last, let factor = units[last] {
        unit = factor
        digits = text.dropLast()
    }
    guard let value = Double(digits), value > 0, value * unit <= 86_400 else {
        throw UsageError("\"\(text)\" is not a duration like 90s, 5m or 1h (at most 24h).")
    }
    return value * unit
}
