import Foundation

/// A usage error: exit 2 with this sentence.
struct UsageError: Error {
    let sentence: String
    init(_ sentence: String) { self.sentence = sentence }
}

/// The command line after the global options: positional words and
/// `--flag [value]` options, checked against what the command accepts.
struct Arguments {
    var words: [String]
    private var options: [String: String] = [:]
    private var switches: Set<String> = []

    /// Splits `raw`: `valued` flags take the next word, `flags` take none; anything else starting with `--` is a usage error.
    init(_ raw: [String], valued: Set<String> = [], flags: Set<String> = []) throws(UsageError) {
        words = []
        var index = 0
        while index < raw.count {
            let word = raw[index]
            index += 1
            guard word.hasPrefix("--"), word.count > 2 else {
                words.append(word)
                continue
            }
            var name = String(word.dropFirst(2))
            var inline: String?
            if let equals = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if valued.contains(name) {
                guard let value = inline ?? (index < raw.count ? raw[index] : nil) else { throw UsageError("--\(name) needs a value.") }
                if inline == nil { index += 1 }
                options[name] = value
            } else if flags.contains(name), inline == nil {
                switches.insert(name)
            } else {
                throw UsageError("Unknown option --\(name).")
            }
        }
    }

    func value(_ name: String) -> String? { options[name] }
    func has(_ name: String) -> Bool { switches.contains(name) }

    /// The `index`th word, or a usage error naming `what`.
    func word(_ index: Int, _ what: String) throws(UsageError) -> String {
        guard index < words.count else { throw UsageError("Name \(what).") }
        return words[index]
    }

    /// No more than `count` words.
    func atMost(_ count: Int) throws(UsageError) {
        if words.count > count { throw UsageError("Unexpected \"\(words[count])\".") }
    }
}

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
