/// A command line read whole: its options' values, its flags, its words, and
/// what it passes on to the settings, each checked against what the command takes.
package struct Arguments: Sendable {
    /// The words that are no option, in order; in the `.leading` layout the command and every word after it.
    package private(set) var words: [String] = []
    /// The options for the settings (`.sharedWithSettings`), each with its value, in order.
    package private(set) var passedOn: [String] = []
    /// The words and passed-on options together, in the order they were typed: all the line but the command's options.
    package private(set) var rest: [String] = []
    private var values: [String: String] = [:]
    private var flags: Set<String> = []

    /// Reads `arguments` whole (see `ArgumentReader`); an option given twice keeps its last value.
    /// - Throws: `UsageError` for an option the command does not take, or one without its value.
    package init(
        _ arguments: [String], valued: Set<String> = [], flags: Set<String> = [], layout: OptionLayout = .command
    ) throws(UsageError) {
        var reader = ArgumentReader(arguments, valued: valued, flags: flags, layout: layout)
        while let item = try reader.next() {
            switch item {
            case .flag(let name): self.flags.insert(name)
            case .option(let name, let value): values[name] = value
            case .word(let word):
                words.append(word)
                rest.append(word)
            case .passedOn(let option):
                passedOn += option
                rest += option
            }
        }
        if layout == .leading {
            words = reader.remaining
            rest += words
        }
    }

    /// The value of the option `name` (without dashes), if it was given.
    package func value(_ name: String) -> String? { values[name] }

    /// Whether the flag `name` (without dashes) was given.
    package func has(_ name: String) -> Bool { flags.contains(name) }

    /// The word at `index`.
    /// - Throws: `UsageError` "Name `what`." when there are fewer words.
    package func word(_ index: Int, _ what: String) throws(UsageError) -> String {
        guard index < words.count else { throw UsageError("Name \(what).") }
        return words[index]
    }

    /// Checks that there are at most `count` words.
    /// - Parameter help: where the command's usage is (`trifactord users --help`), named by the refusal.
    /// - Throws: `UsageError` naming the first word too many: `Unexpected "b".`, or with `help`
    ///   `Unexpected argument "b": see trifactord users --help.`
    package func atMost(_ count: Int, see help: String? = nil) throws(UsageError) {
        guard words.count > count else { return }
        let extra = words[count]
        throw UsageError(help.map { "Unexpected argument \"\(extra)\": see \($0)." } ?? "Unexpected \"\(extra)\".")
    }
}
