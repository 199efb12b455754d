/// A command line that cannot be run as typed: one plain sentence saying what is wrong
/// ("Unknown option --bogus."), which the program prints on standard error before exiting
/// with `UsageError.exitCode`.
package struct UsageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The exit status of a usage error, in `trifactor` and `trifactord` alike.
    package static let exitCode: Int32 = 2

    /// What is wrong, as one sentence that ends with a full stop.
    package let sentence: String

    /// A usage error saying `sentence`.
    package init(_ sentence: String) {
        self.sentence = sentence
    }

    /// The sentence, so a program that prints any error's description prints it alone.
    package var description: String { sentence }
}
