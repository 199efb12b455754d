import CommandLineKit
import Testing

@Suite("Options shared with the settings")
struct SharedOptionsTests {
    @Test("the command keeps its own options; the settings' pass on in order, each with the value after it")
    func passOn() throws {
        let a = try Arguments(
            ["show", "--database-url", "sqlite:t.db", "--email", "ann@example.com", "--dev", "--json", "u1"],
            valued: ["email"], flags: ["json"], layout: .sharedWithSettings)
        #expect(a.value("email") == "ann@example.com" && a.has("json"))
        #expect(a.words == ["show", "u1"])
        #expect(a.passedOn == ["--database-url", "sqlite:t.db", "--dev"])
    }

    @Test("a --name=value word passes on whole, even one that names the command's own option")
    func equalsFormPassesOn() throws {
        let a = try Arguments(["--name=x", "--listen=127.0.0.1:0"], valued: ["name"], layout: .sharedWithSettings)
        #expect(a.value("name") == nil)
        #expect(a.passedOn == ["--name=x", "--listen=127.0.0.1:0"])
    }

    @Test("the command's own option never takes a word starting with -- as its value")
    func valueIsNoOption() {
        #expect(throws: UsageError("--name needs a value.")) {
            try Arguments(["--name", "--json"], valued: ["name"], flags: ["json"], layout: .sharedWithSettings)
        }
        #expect(throws: UsageError("--name needs a value.")) {
            try Arguments(["--name"], valued: ["name"], layout: .sharedWithSettings)
        }
    }

    @Test("rest keeps the words and the passed-on options in the order they were typed")
    func restInOrder() throws {
        let a = try Arguments(
            ["release", "--database-url", "x", "--limit", "5", "r1"], valued: ["limit"], layout: .sharedWithSettings)
        #expect(a.rest == ["release", "--database-url", "x", "r1"])
        #expect(a.value("limit") == "5")
    }
}
