import API
import Foundation
import Testing

@testable import TrifactorKit
@testable import trifactor

@Suite("The CLI's exit codes for Trifactor's refusals")
struct CLIExitCodeTests {
    static func refusal(_ status: Int, _ code: ProblemCode) -> TrifactorError {
        .server(
            ServerProblem(
                Problem(status: status, code: code, title: code.rawValue, detail: "Refused."), retryAfter: nil))
    }

    @Test("a frozen second step is denied (3), not 'retry later' (5): only an administrator's reset unlocks it")
    func frozenIsDenied() {
        #expect(CLI.describe(Self.refusal(403, "second_factor_frozen")).1 == .denied)
        #expect(CLI.describe(Self.refusal(429, "too_many_attempts")).1 == .limited)
        #expect(CLI.describe(Self.refusal(403, "attempts_exhausted")).1 == .denied)
    }

    @Test("reset-password's last wrong proof exits as a dead reset credential does (4): start over with a new code")
    func resetExhaustedIsExpired() {
        let exhausted = CLI.describe(ResetPasswordCommand.refusal(Self.refusal(403, "attempts_exhausted")))
        #expect(exhausted.1 == .expired)
        #expect(
            exhausted.1 == CLI.describe(ResetPasswordCommand.refusal(Self.refusal(401, "invalid_reset_credential"))).1)
        #expect(CLI.describe(ResetPasswordCommand.refusal(Self.refusal(400, "invalid_code"))).1 == .denied)
    }
}
