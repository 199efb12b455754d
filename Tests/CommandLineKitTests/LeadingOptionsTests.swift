import CommandLineKit
import Testing

@Suite("Global options, before the command")
struct LeadingOptionsTests {
    static func read(_ line: [String]) throws(UsageError) -> (items: [ArgumentReader.Item], remaining: [String]) {
        var reader = ArgumentReader(line, valued: ["server", "profile"], flags: ["json", "help"], layout: .leading)
        var items: [ArgumentReader.Item] = []
        while let item = try reader.next() { items.append(item) }
        return (items, reader.remaining)
    }

    @Test("options end at the first other word, which leaves the command and its own options unread")
    func endAtTheCommand() throws {
        let (items, remaining) = try Self.read([
            "--json", "--server", "http://127.0.0.1:8080", "login", "--push", "ann@example.com",
        ])
        #expect(items == [.flag("json"), .option("server", value: "http://127.0.0.1:8080")])
        #expect(remaining == ["login", "--push", "ann@example.com"])
        #expect(try Arguments(["--json", "whoami", "x"], flags: ["json"], layout: .leading).words == ["whoami", "x"])
    }

    @Test("a value is the next word whatever it looks like")
    func valueIsTheNextWord() throws {
        #expect(try Self.read(["--profile", "--json"]).items == [.option("profile", value: "--json")])
    }

    @Test(
        "an option that is not one of them is refused, saying options come before the command; so are --name=value and --"
    )
    func unknownOption() {
        for word in ["--nope", "--server=http://x", "--json=1", "--"] {
            #expect(throws: UsageError("Unknown option \(word) (global options come before the command).")) {
                try Self.read([word, "whoami"])
            }
        }
    }

    @Test("an option without its value says it needs one")
    func missingValue() {
        #expect(throws: UsageError("--server needs a value.")) { try Self.read(["--server"]) }
    }

    @Test("the reader stops at each option, so a program answers --help before an option after it is read")
    func oneAtATime() throws {
        var reader = ArgumentReader(["--help", "--bogus"], flags: ["help"], layout: .leading)
        #expect(try reader.next() == .flag("help"))
        #expect(throws: UsageError("Unknown option --bogus (global options come before the command).")) {
            try reader.next()
        }
    }
}
