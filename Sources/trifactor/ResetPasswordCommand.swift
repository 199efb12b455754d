import CommandLineKit
import Foundation
import TrifactorKit

/// `trifactor reset-password EMAIL`: a forgotten password. The code from the
/// email, then a second factor when the account has one, then the new
/// password (twice). Every session ends; sign in again afterwards.
struct ResetPasswordCommand: Command {
    static let name = "reset-password"
    static let summary =
        "EMAIL [--code @FILE] [--factor ID] [--factor-code @FILE] [--password-stdin | --password @FILE]   a forgotten password, by the emailed code"

    static func run(_ raw: [String], _ context: Context) async throws {
        let a = try Arguments(raw, valued: ["code", "factor", "factor-code", "password"], flags: ["password-stdin"])
        let email = try a.word(0, "the email address")
        try a.atMost(1)
        let client = context.client
        // With --code the code came already (a script asked before): asking again would send another.
        if a.value("code") == nil {
            try await client.requestPasswordReset(email: email)
            if !context.json { print("If \(email) has an account, a code is on its way there (valid for 10 minutes).") }
        }
        let code = try context.terminal.secret(
            stdin: false, file: a.value("code"), name: "code", prompt: "Code from the email: ")
        let reset = try await client.verifyPasswordReset(email: email, code: code)
        var hint: FactorHint?
        var proof: SecondFactorProof?
        if reset.secondFactorRequired {
            let chosen = try LoginCommand.pick(reset.hints, wanted: a.value("factor"), context)
            let challenge = try await reset.challenge(chosen)
            proof = try await FactorPrompt.proof(
                for: challenge, hint: chosen, codeStdin: false, codeFile: a.value("factor-code"),
                deadline: reset.expiresAt,
                purpose: "reset", context)
            hint = chosen
        }
        let password = try newPassword(a, context)
        do {
            try await reset.complete(newPassword: password, proving: hint, with: proof)
        } catch {
            throw Self.refusal(error)
        }
        context.output(
            "The password of \(email) is reset and every session is signed out: sign in with `trifactor login \(email)`.",
            json: ["status": "password_reset"])
    }

    /// How a refused completion is reported: the reset's last wrong proof
    /// (`attempts_exhausted`) spent its credential, so it exits as a dead
    /// credential does (4: start over with a new code), not as a wrong code.
    static func refusal(_ error: any Error) -> any Error {
        guard let p = (error as? TrifactorError)?.problem, p.code == .attemptsExhausted else { return error }
        return CLIFailure(p.detail, code: .expired)
    }

    /// The new password: from standard input, or typed twice.
    static func newPassword(_ a: Arguments, _ context: Context) throws -> String {
        if a.has("password-stdin") || a.value("password") != nil {
            return try context.terminal.secret(
                stdin: a.has("password-stdin"), file: a.value("password"), name: "password", prompt: "")
        }
        let first = try context.terminal.secret(stdin: false, file: nil, name: "password", prompt: "New password: ")
        let again = try context.terminal.secret(
            stdin: false, file: nil, name: "password", prompt: "New password again: ")
        guard first == again else {
            throw CLIFailure("The two passwords differ; nothing was changed. Run the command again.")
        }
        return first
    }
}
