import Foundation
import TrifactorKit

/// What the bank says about Trifactor's answers: a wait said once, a wrong
/// code with the tries that are really left, and what a refused code means
/// for the step it was for.
extension BankApp {
    /// Wrong codes after which a texted code stops working: Trifactor's phone verification ends the request
    /// after three (DESIGN.md, "Verify"), so even the right code is refused after that.
    static let textedCodeTries = 3
    /// Wrong email codes Trifactor's email verification allows in `emailCodeWindow` (ten minutes from the first code),
    /// a new code included: after five, no email code works until the window is over.
    static let emailCodeTries = 5
    static let emailCodeWindow: TimeInterval = 600

    /// What a refused code means for the step it was for.
    enum CodeVerdict: Equatable {
        /// Type it again: the sentence says how many tries are left.
        case again(String)
        /// This code works no more (used up, expired, replaced): the page offers a new one.
        case newCode(String)
        /// Too many wrong codes: the step ends.
        case over(String)
    }

    /// The verdict on a refused code, `tries` counting the wrong ones typed for this code (`texted`: a text
    /// or a call, which stops working after `textedCodeTries`); nil when the refusal is not about the code.
    static func verdict(_ error: any Error, tries: inout Int, texted: Bool, limit: Int? = nil) -> CodeVerdict? {
        guard let problem = (error as? TrifactorError)?.problem else { return nil }
        switch problem.code {
        case .invalidCode:
            tries += 1
            let perCode = limit ?? (texted ? textedCodeTries : nil)
            if problem.remainingAttempts == 0 { return .over("That code is wrong, and that was the last try.") }
            if let perCode, tries >= perCode {
                return .newCode(
                    "That code is wrong. After \(perCode) wrong tries a code stops working: send a new code.")
            }
            return .again(wrongCode(left: problem.remainingAttempts, leftOnThisCode: perCode.map { $0 - tries }))
        case .attemptsExhausted:
            // The flow's fifth wrong proof: Trifactor ended the sign-in, the step-up's session or the transfer.
            tries += 1
            return .over("That code is wrong, and that was the last try.")
        case .secondFactorFrozen:
            return .over(frozen)
        case .tooManyAttempts:
            return .over("Too many wrong codes. \(tryAgain(problem.retryAfter))")
        case "enrollment_not_found", "authorization_not_found":
            return .newCode("That code has expired or was used up: send a new code.")
        default:
            return nil
        }
    }

    /// After a hundred wrong codes in a row, Trifactor locks the customer's second factors until the bank's staff reset them.
    static let frozen =
        "After too many wrong codes, confirming is locked for your safety. Call us to unlock it: nothing can be confirmed until then."

    /// "That code is wrong", with the tries that are left: on this code, or before what is being confirmed ends, whichever comes first.
    static func wrongCode(left: Int?, leftOnThisCode: Int?) -> String {
        switch (left, leftOnThisCode) {
        case (let all, let onCode?) where all.map({ onCode < $0 }) ?? true:
            return
                "That code is wrong. \(onCode) more \(onCode == 1 ? "try" : "tries") with this code, then send a new one."
        case (let all?, _):
            return "That code is wrong. \(all) more \(all == 1 ? "try" : "tries"), then you start again."
        default:
            return "That code is wrong. Check it and try again."
        }
    }

    /// A sentence for an SDK failure, safe to show, saying any wait once.
    static func sentence(_ error: any Error) -> String {
        guard let error = error as? TrifactorError else { return "Something went wrong. Please try again." }
        if let p = error.problem {
            switch p.code {
            case .rateLimited: return "Too many requests just now. \(tryAgain(p.retryAfter))"
            case .tooManyAttempts: return "Too many wrong tries. \(tryAgain(p.retryAfter))"
            case .attemptsExhausted: return "Too many wrong codes, so this was cancelled. Please start again."
            case .secondFactorFrozen: return frozen
            case .passkeyRefused: return passkeyRefused
            default:
                guard let wait = p.retryAfter, !mentionsWait(p.detail) else { return p.detail }
                return "\(p.detail) \(tryAgain(wait))"
            }
        }
        switch error.code {
        case .transport: return "The bank cannot reach its sign-in service right now. Please try again in a minute."
        case .approvalDenied: return "The sign-in was denied on your device."
        case .expired: return "That took too long. Please start again."
        case .invalidArgument: return error.description
        default: return "Something went wrong. Please try again."
        }
    }

    /// "Please try again in 83 seconds." (minutes from two minutes on; "in a moment" without a wait).
    static func tryAgain(_ seconds: TimeInterval?) -> String {
        guard let seconds else { return "Please try again in a moment." }
        return "Please try again in \(duration(seconds))."
    }

    /// "1 second", "83 seconds", "3 minutes".
    static func duration(_ seconds: TimeInterval) -> String {
        let whole = max(1, Int(seconds.rounded(.up)))
        if whole < 120 { return "\(whole) \(whole == 1 ? "second" : "seconds")" }
        let minutes = (whole + 59) / 60
        return "\(minutes) minutes"
    }

    /// Whether a sentence from Trifactor says its wait itself ("try again in 83 seconds").
    static func mentionsWait(_ detail: String) -> Bool {
        let lower = detail.lowercased()
        return lower.contains("again in") || lower.contains("seconds") || lower.contains("minutes")
    }

    /// Whether a refusal means that no text can be sent yet (a rate limit on the number or the account).
    static func isSendLimit(_ error: any Error) -> Bool {
        guard let code = (error as? TrifactorError)?.problem?.code else { return false }
        return code == .rateLimited || code == "budget_exceeded"
    }

    /// "We cannot send another text yet. Please try again in 83 seconds, or use your authenticator app or your
    /// passkey instead." The other ways are the customer's factors other than `hint` that need no text.
    static func cannotText(_ error: any Error, others: [FactorHint]) -> String {
        let wait = tryAgain((error as? TrifactorError)?.problem?.retryAfter).dropLast()
        let ways = otherWays(others)
        return "We cannot send another text yet. \(wait)\(ways.map { ", or \($0) instead" } ?? "")."
    }

    /// "use your authenticator app or your passkey": the factors among `hints` that work without a text.
    static func otherWays(_ hints: [FactorHint]) -> String? {
        var ways: [String] = []
        if hints.contains(where: { $0.kind == .passkey }) { ways.append("your passkey") }
        if hints.contains(where: { $0.kind == .totp }) { ways.append("your authenticator app") }
        if hints.contains(where: { $0.kind == .device }) { ways.append("your device") }
        if hints.contains(where: { $0.kind == .recoveryCode }) { ways.append("a recovery code") }
        guard !ways.isEmpty else { return nil }
        return "use " + (ways.count == 1 ? ways[0] : ways.dropLast().joined(separator: ", ") + " or " + ways.last!)
    }
}
