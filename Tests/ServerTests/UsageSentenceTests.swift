import Foundation
import Testing

/// The usage errors of `trifactor` and `trifactord`, sentence by sentence, as real processes: what scripts and people
/// see when a command line is wrong, before any server or database is asked.
@Suite("Usage errors of trifactor and trifactord")
struct UsageSentenceTests {
    /// Runs the built `trifactor` with a home of its own, so no vault of the machine's is read.
    static func trifactor(_ arguments: [String]) throws -> CommandLineTests.Run {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("usage-\(UUID().uuidString)").path
        return try CommandLineTests.run(
            arguments, environment: ["HOME": home, "XDG_DATA_HOME": home + "/data", "XDG_RUNTIME_DIR": ""],
            program: CommandLineTests.built("trifactor"))
    }

    @Test("trifactor: a wrong command line is one sentence on standard error and exit 2")
    func trifactorSentences() throws {
        for (arguments, sentence) in [
            (["login", "--bogus"], "Unknown option --bogus."),
            (["login", "--push=1", "a@example.com"], "Unknown option --push."),
            (["--nope", "whoami"], "Unknown option --nope (global options come before the command)."),
            (
                ["--server=http://x", "whoami"],
                "Unknown option --server=http://x (global options come before the command)."
            ),
            (["--", "whoami"], "Unknown option -- (global options come before the command)."),
            (["--server"], "--server needs a value."),
            ([], "Name a command; `trifactor help` lists them."),
            (["frobnicate"], "Unknown command \"frobnicate\"; `trifactor help` lists them."),
            (["login"], "Name the email address."),
            (["login", "a@example.com", "b"], "Unexpected \"b\"."),
            (["login", "a@example.com", "--factor"], "--factor needs a value."),
            (
                ["vault", "unlock", "--for", "forever"],
                "\"forever\" is not a duration like 90s, 5m or 1h (at most 24h)."
            ),
        ] as [([String], String)] {
            let r = try Self.trifactor(arguments)
            #expect(r.status == 2, "\(arguments)")
            #expect(r.err == "trifactor: \(sentence)\n", "\(arguments)")
            #expect(r.out.isEmpty, "\(arguments)")
        }
    }

    @Test(
        "trifactor: --json before the refused option prints the refusal as JSON too; after it, the scan stopped first")
    func trifactorJSON() throws {
        let before = try Self.trifactor(["--json", "--bogus"])
        #expect(before.status == 2)
        #expect(
            before.out
                == "{\"error\":\"Unknown option --bogus (global options come before the command).\",\"exit_code\":2}\n")
        let after = try Self.trifactor(["--bogus", "--json"])
        #expect(after.status == 2 && after.out.isEmpty)
    }

    @Test("trifactor: --help answers at once, before an option after it is looked at")
    func trifactorHelp() throws {
        for arguments in [["--help"], ["--help", "--bogus"], ["help"], ["--json", "--help"]] {
            let r = try Self.trifactor(arguments)
            #expect(r.status == 0, "\(arguments)")
            #expect(r.out.hasPrefix("usage: trifactor [--server URL]") && r.out.contains("\n  login "), "\(arguments)")
        }
    }

    @Test("trifactord: a subcommand's wrong options and words are one sentence and exit 2")
    func trifactordSentences() throws {
        for (arguments, sentence) in [
            (["keys", "create", "--name"], "--name needs a value."),
            (["keys", "create", "--name", "--json"], "--name needs a value."),
            (["keys", "create", "--name=x"], "Unknown option --name: see trifactord serve --help."),
            (["users", "find", "--bogus"], "Unknown option --bogus: see trifactord serve --help."),
            (["users", "find", "--email"], "--email needs a value."),
            (["users", "show", "a", "b"], "Unexpected argument \"b\": see trifactord users --help."),
            (["keys", "ring", "extra"], "Unexpected argument \"extra\": see trifactord keys --help."),
            (["admin-keys", "list", "extra"], "Unexpected argument \"extra\": see trifactord admin-keys --help."),
            (["users", "list", "--limit"], "--limit needs a whole number from 1 to 10000."),
            (["users", "list", "--limit", "--json"], "--limit needs a whole number from 1 to 10000."),
            (["users", "list", "extra"], "Unknown option extra: see trifactord serve --help."),
            (["audit", "tail", "--limit=5"], "Unknown option --limit: see trifactord serve --help."),
            (
                ["review", "release", "--database-url", "x"],
                "Name the verification: trifactord review release REQUEST_ID (see trifactord review list)."
            ),
            (["backup"], "Say where the copy goes, first: trifactord backup PATH [--database-url URL]."),
        ] as [([String], String)] {
            let r = try CommandLineTests.run(arguments)
            #expect(r.status == 2, "\(arguments)")
            #expect(r.err == "trifactord: \(sentence)\n", "\(arguments)")
        }
    }

    @Test("trifactord: --help anywhere after a command prints its usage and exits 0, even after a word it would refuse")
    func trifactordHelp() throws {
        for (arguments, usage) in [
            (["keys", "create", "--name", "--help"], "Usage: trifactord keys create --name NAME"),
            (["users", "show", "a", "b", "--help"], "Usage: trifactord users list"),
            (["admin-keys", "--bogus", "--help"], "Usage: trifactord admin-keys create"),
            (["review", "--help"], "Usage: trifactord review list"),
            (["backup", "--help"], "Usage: trifactord backup PATH"),
        ] as [([String], String)] {
            let r = try CommandLineTests.run(arguments)
            #expect(r.status == 0, "\(arguments)")
            #expect(r.out.hasPrefix(usage), "\(arguments): \(r.out)")
        }
    }
}
