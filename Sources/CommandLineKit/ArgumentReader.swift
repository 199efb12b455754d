/// Reads a command line one option or word at a time, as its `OptionLayout`
/// says, so a program can act on each as it comes (answer `--help` at once,
/// remember `--json` before a later option is refused).
package struct ArgumentReader: Sendable {
    /// One thing read from the line.
    package enum Item: Sendable, Equatable {
        /// A flag the command takes, by its name without dashes (`json`).
        case flag(String)
        /// An option the command takes, by its name without dashes, with its value.
        case option(String, value: String)
        /// A word that is no option (`login`, an email, an id).
        case word(String)
        /// An option for the settings (`.sharedWithSettings`): the word, and its value when it has one after it.
        case passedOn([String])
    }

    private let arguments: [String]
    private let valued: Set<String>
    private let flags: Set<String>
    private let layout: OptionLayout
    private var index = 0

    /// A reader of `arguments` (without the program's name).
    /// - Parameters:
    ///   - valued: the names (without dashes) of the options that take a value.
    ///   - flags: the names of the options that take none.
    package init(
        _ arguments: [String], valued: Set<String> = [], flags: Set<String> = [], layout: OptionLayout = .command
    ) {
        self.arguments = arguments
        self.valued = valued
        self.flags = flags
        self.layout = layout
    }

    /// The words not read yet: in the `.leading` layout, once `next()` returned nil, the command and its own words.
    package var remaining: [String] { Array(arguments[index...]) }

    /// The next option or word; nil at the end of the line, or in the `.leading` layout at the first word.
    /// - Throws: `UsageError` for an option the command does not take (except in `.sharedWithSettings`) or one
    ///   without its value; the words after it are not read.
    package mutating func next() throws(UsageError) -> Item? {
        guard index < arguments.count else { return nil }
        switch layout {
        case .command: return try nextOfCommand()
        case .leading: return try nextLeading()
        case .sharedWithSettings: return try nextShared()
        }
    }

    private mutating func take() -> String {
        defer { index += 1 }
        return arguments[index]
    }

    private var following: String? { index < arguments.count ? arguments[index] : nil }

    private mutating func nextOfCommand() throws(UsageError) -> Item {
        let word = take()
        guard word.hasPrefix("--"), word.count > 2 else { return .word(word) }
        var name = String(word.dropFirst(2))
        var inline: String?
        if let equals = name.firstIndex(of: "=") {
            inline = String(name[name.index(after: equals)...])
            name = String(name[..<equals])
        }
        if valued.contains(name) {
            if let inline { return .option(name, value: inline) }
            guard following != nil else { throw UsageError("--\(name) needs a value.") }
            return .option(name, value: take())
        }
        guard flags.contains(name), inline == nil else { throw UsageError("Unknown option --\(name).") }
        return .flag(name)
    }

    private mutating func nextLeading() throws(UsageError) -> Item? {
        guard let word = following, word.hasPrefix("--") else { return nil }
        index += 1
        let name = String(word.dropFirst(2))
        if valued.contains(name) {
            guard following != nil else { throw UsageError("\(word) needs a value.") }
            return .option(name, value: take())
        }
        guard flags.contains(name) else {
            throw UsageError("Unknown option \(word) (global options come before the command).")
        }
        return .flag(name)
    }

    private mutating func nextShared() throws(UsageError) -> Item {
        let word = take()
        guard word.hasPrefix("--") else { return .word(word) }
        if word.contains("=") { return .passedOn([word]) }
        let name = String(word.dropFirst(2))
        let value = following.flatMap { $0.hasPrefix("--") ? nil : $0 }
        if valued.contains(name) {
            guard value != nil else { throw UsageError("\(word) needs a value.") }
            return .option(name, value: take())
        }
        if flags.contains(name) { return .flag(name) }
        guard value != nil else { return .passedOn([word]) }
        return .passedOn([word, take()])
    }
}
