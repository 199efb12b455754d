import CommandLineKit
import Testing

@Suite("Usage text and usage errors")
struct UsageTests {
    @Test("--help anywhere on the line asks for help, even as an option's value")
    func helpAnywhere() {
        #expect(Usage.isAsked(in: ["create", "--name", "--help"]))
        #expect(Usage.isAsked(in: ["--help"]))
        #expect(!Usage.isAsked(in: ["create", "-h", "--helpful"]))
    }

    @Test("the command table pads every name to the longest, one space before its summary")
    func table() {
        #expect(
            Usage.table([("login", "sign in"), ("verify-email", "confirm"), ("totp", "codes")]) == """
                  login        sign in
                  verify-email confirm
                  totp         codes
                """)
    }

    @Test("a usage error is its one sentence and exits 2")
    func oneSentence() {
        let error = UsageError("Unknown option --bogus.")
        #expect(String(describing: error) == "Unknown option --bogus.")
        #expect(UsageError.exitCode == 2)
    }
}
