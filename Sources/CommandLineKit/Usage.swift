/// A program's usage text: how a command line asks for it, and the table of
/// commands in it.
package enum Usage {
    /// Whether `arguments` ask for help: `--help` anywhere among them, even as an option's value or after a word
    /// that would be refused, so help is answered before anything on the line is checked.
    package static func isAsked(in arguments: [String]) -> Bool {
        arguments.contains("--help")
    }

    /// One line a command, its name padded to the longest name's width and its summary after one space, each
    /// line indented by two (`  login    EMAIL [--push] …   sign in`).
    package static func table(_ rows: [(name: String, summary: String)]) -> String {
        let width = rows.map(\.name.count).max() ?? 0
        return rows.map { "  " + $0.name + String(repeating: " ", count: width - $0.name.count) + " " + $0.summary }
            .joined(separator: "\n")
    }
}
