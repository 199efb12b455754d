import Foundation
import Testing

@testable import TrifactorServer

/// A setting's former name keeps working for one release, with a sentence naming its successor
/// (docs/operations/upgrades.md, "Renamed settings").
@Suite("renamed settings")
struct RenamedSettingsTests {
    static func parse(_ arguments: [String] = [], _ environment: [String: String] = [:]) throws -> Configuration {
        try ConfigurationParser.parse(arguments: arguments, environment: environment, warn: false)
    }

    @Test("a former variable is read as its successor, with a sentence naming it and the release that drops it")
    func formerVariable() throws {
        let config = try Self.parse([], ["TRIFACTOR_RP_ID": "Bank.example", "TRIFACTOR_RP_NAME": "Bank"])
        #expect(config.rpID == "bank.example" && config.rpName == "Bank")
        #expect(
            config.deprecations == [
                "TRIFACTOR_RP_ID is now TRIFACTOR_WEBAUTHN_RP_ID: rename it in your settings (the old name is read until 0.12.0).",
                "TRIFACTOR_RP_NAME is now TRIFACTOR_WEBAUTHN_RP_NAME: rename it in your settings (the old name is read until 0.12.0).",
            ])
        #expect(try Self.parse([], ["TRIFACTOR_WEBAUTHN_RP_ID": "bank.example"]).deprecations.isEmpty)
    }

    @Test("given both ways in one place, the new name wins and the former is named as ignored")
    func bothNames() throws {
        let variables = try Self.parse(
            [], ["TRIFACTOR_RP_ID": "old.example", "TRIFACTOR_WEBAUTHN_RP_ID": "new.example"])
        #expect(variables.rpID == "new.example")
        #expect(variables.deprecations.count == 1 && variables.deprecations[0].hasPrefix("TRIFACTOR_RP_ID is ignored"))
        // Flags, in either order and either form.
        for arguments in [
            ["--rp-id", "old.example", "--webauthn-rp-id", "new.example"],
            ["--webauthn-rp-id=new.example", "--rp-id=old.example"],
        ] {
            let flags = try Self.parse(arguments)
            #expect(flags.rpID == "new.example", "\(arguments)")
            #expect(
                flags.deprecations == [
                    "--rp-id is ignored: --webauthn-rp-id, its new name, is given too. Remove --rp-id."
                ])
        }
    }

    @Test("a former flag is read as its successor, and like any flag wins over a variable")
    func formerFlag() throws {
        for arguments in [["--rp-id", "flag.example"], ["--rp-id=flag.example"]] {
            let config = try Self.parse(arguments, ["TRIFACTOR_WEBAUTHN_RP_ID": "variable.example"])
            #expect(config.rpID == "flag.example")
            #expect(
                config.deprecations == [
                    "--rp-id is now --webauthn-rp-id: change your command line (the old name is read until 0.12.0)."
                ])
        }
    }

    @Test("a value refused under a former name is named by the name the operator wrote")
    func refusalsNameTheFormerName() throws {
        do {
            _ = try Self.parse([], ["TRIFACTOR_RP_ID": "https://bank.example"])
            Issue.record("a URL was taken as a WebAuthn RP ID")
        } catch {
            #expect("\(error)" == "TRIFACTOR_RP_ID must be a domain such as bank.example.")
        }
        do {
            _ = try Self.parse(["--rp-id", "https://bank.example"])
            Issue.record("a URL was taken as a WebAuthn RP ID")
        } catch {
            #expect("\(error)" == "--rp-id must be a domain such as bank.example.")
        }
    }

    @Test("every former name's successor is a setting, and no former name is still one")
    func tableIsConsistent() {
        for old in Setting.renamed {
            #expect(Setting.all.contains { $0.variable == old.successor }, "\(old.successor)")
            #expect(!Setting.all.contains { $0.variable == old.variable || $0.flag == old.flag }, "\(old.variable)")
        }
    }
}
