/// Where a command's options stand on its line, and so how a word that starts
/// with `--` is read.
package enum OptionLayout: Sendable, Equatable {
    /// After a verb, its own options only (`trifactor login EMAIL --factor ID`):
    /// `--name value` or `--name=value`, a flag alone; an option the verb does
    /// not take is refused by its name; `--` and `-x` are words.
    case command
    /// Before the verb (`trifactor --json --server URL login …`): every word that
    /// starts with `--` is one option, taken whole (no `=value`) with its value as
    /// the next word, until the first other word, which names the command. An
    /// option that is not one of them is refused, saying options come before the command.
    case leading
    /// Shared with the settings that every command of a program reads
    /// (`trifactord users show ID --database-url URL`): the command's own options
    /// take `--name value`, a value never starting with `--` (that is the next
    /// option); any other option, with the value after it, and every
    /// `--name=value` word are passed on in order for the settings to read.
    case sharedWithSettings
}
