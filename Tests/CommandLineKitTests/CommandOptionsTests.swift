import CommandLineKit
import Testing

@Suite("A command's own options, after its verb")
struct CommandOptionsTests {
    @Test("an option takes its value as the next word or after =, a flag takes none, and the other words stay in order")
    func valuesFlagsAndWords() throws {
        let a = try Arguments(
            ["ann@example.com", "--factor", "f1", "--code=@code.txt", "--push", "extra"], valued: ["factor", "code"],
            flags: ["push"])
        #expect(a.value("factor") == "f1")
        #expect(a.value("code") == "@code.txt")
        #expect(a.has("push") && !a.has("factor"))
        #expect(a.words == ["ann@example.com", "extra"])
        #expect(a.value("name") == nil)
    }

    @Test("an option given twice keeps its last value")
    func lastValueWins() throws {
        #expect(try Arguments(["--name", "a", "--name=b"], valued: ["name"]).value("name") == "b")
    }

    @Test("the next word is an option's value whatever it looks like")
    func valueLooksLikeAnOption() throws {
        #expect(try Arguments(["--factor", "--push"], valued: ["factor"], flags: ["push"]).value("factor") == "--push")
    }

    @Test("an option the command does not take is refused by its name, without the value typed after =")
    func unknownOption() {
        #expect(throws: UsageError("Unknown option --bogus.")) { try Arguments(["ann", "--bogus"]) }
        #expect(throws: UsageError("Unknown option --bogus.")) { try Arguments(["--bogus=1"]) }
    }

    @Test("a flag given a value is refused as an option the command does not take")
    func flagWithValue() {
        #expect(throws: UsageError("Unknown option --push.")) { try Arguments(["--push=1"], flags: ["push"]) }
    }

    @Test("an option at the end of the line without its value says it needs one")
    func missingValue() {
        #expect(throws: UsageError("--factor needs a value.")) {
            try Arguments(["ann", "--factor"], valued: ["factor"])
        }
    }

    @Test("-- and single-dash words are words of the command")
    func dashWords() throws {
        #expect(try Arguments(["--", "-x", "-"]).words == ["--", "-x", "-"])
    }

    @Test("a missing word is asked for by what it names")
    func missingWord() throws {
        let a = try Arguments(["ann@example.com"])
        #expect(try a.word(0, "the email address") == "ann@example.com")
        #expect(throws: UsageError("Name the factor's id.")) { try a.word(1, "the factor's id") }
    }

    @Test(
        "more words than the command takes are refused naming the first extra one, and with a help pointer where the usage is"
    )
    func extraWords() throws {
        let a = try Arguments(["show", "a", "b", "c"])
        try a.atMost(4)
        #expect(throws: UsageError("Unexpected \"b\".")) { try a.atMost(2) }
        #expect(throws: UsageError("Unexpected argument \"a\": see trifactord users --help.")) {
            try a.atMost(1, see: "trifactord users --help")
        }
    }
}
