import API
import Foundation
import Testing

@testable import TrifactorBank
@testable import TrifactorKit

@Suite("What the bank says about Trifactor's refusals")
struct SentenceTests {
    static func refusal(
        _ status: Int, _ code: ProblemCode, detail: String = "Refused.", remaining: Int? = nil,
        retryAfter: TimeInterval? = nil
    ) -> TrifactorError {
        var problem = Problem(status: status, code: code, title: code.rawValue, detail: detail)
        problem.remainingAttempts = remaining
        return .server(ServerProblem(problem, retryAfter: retryAfter))
    }

    @Test("a limit says its wait once, whether Trifactor's sentence already has one or not")
    func waitOnce() {
        let limited = Self.refusal(
            429, "rate_limited", detail: "Too many requests: try again in 83 seconds.", retryAfter: 83)
        let sentence = BankApp.sentence(limited)
        #expect(sentence == "Too many requests just now. Please try again in 83 seconds.")
        #expect(sentence.components(separatedBy: "83 seconds").count == 2)
        // A refusal of another kind with a wait of its own in its sentence gets none added; one without gets it once.
        let told = BankApp.sentence(
            Self.refusal(503, "delivery_unavailable", detail: "Try again in 60 seconds.", retryAfter: 60))
        #expect(told == "Try again in 60 seconds.")
        let untold = BankApp.sentence(
            Self.refusal(503, "service_unavailable", detail: "The service is away.", retryAfter: 5))
        #expect(untold == "The service is away. Please try again in 5 seconds.")
        #expect(
            BankApp.duration(0.2) == "1 second" && BankApp.duration(83) == "83 seconds"
                && BankApp.duration(119.2) == "2 minutes")
    }

    @Test("a refused field reads as a sentence that names what was refused")
    func fieldSentences() {
        typealias Field = ServerProblem.InvalidField
        #expect(
            BankApp.fieldSentence(
                Field(
                    name: "new_password", reason: "is too common: it appears in lists of passwords attackers try first")
            )
                == "This password is too common: it appears in lists of passwords attackers try first.")
        #expect(
            BankApp.fieldSentence(Field(name: "password", reason: "must be at least 8 characters"))
                == "This password must be at least 8 characters.")
        #expect(
            BankApp.fieldSentence(Field(name: "email", reason: "Enter an address like ann@example.com."))
                == "Enter an address like ann@example.com.")
    }

    @Test("a text that cannot be sent yet offers the customer's other factors")
    func otherWays() {
        let limited = Self.refusal(429, "rate_limited", retryAfter: 40)
        let passkey = FactorHint(
            EnrolledFactor(
                enrollmentID: "p", kind: "passkey", displayName: "Passkey", maskedPhone: nil, enrolledAt: Date(),
                lastUsedAt: nil))
        let app = FactorHint(
            EnrolledFactor(
                enrollmentID: "t", kind: "totp", displayName: "App", maskedPhone: nil, enrolledAt: Date(),
                lastUsedAt: nil))
        #expect(
            BankApp.cannotText(limited, others: [app, passkey])
                == "We cannot send another text yet. Please try again in 40 seconds, or use your passkey or your authenticator app instead."
        )
        #expect(
            BankApp.cannotText(limited, others: [])
                == "We cannot send another text yet. Please try again in 40 seconds.")
    }

    @Test("a texted code works for three wrong tries: the page says how many are left on it, then asks for a new code")
    func textedTries() {
        var tries = 0
        let wrong = Self.refusal(400, "invalid_code", remaining: 9)
        #expect(
            BankApp.verdict(wrong, tries: &tries, texted: true)
                == .again("That code is wrong. 2 more tries with this code, then send a new one."))
        #expect(
            BankApp.verdict(wrong, tries: &tries, texted: true)
                == .again("That code is wrong. 1 more try with this code, then send a new one."))
        guard case .newCode? = BankApp.verdict(wrong, tries: &tries, texted: true) else {
            Issue.record("a third wrong code asks for a new one")
            return
        }
        // An app's code is limited by Trifactor's count only.
        var appTries = 0
        #expect(
            BankApp.verdict(Self.refusal(400, "invalid_code", remaining: 4), tries: &appTries, texted: false)
                == .again("That code is wrong. 4 more tries, then you start again."))
    }

    @Test(
        "the last try, the flow's budget spent, a lock, frozen factors, or a used-up enrollment end the step or ask for a new code; other refusals are not about the code"
    )
    func endings() {
        var tries = 0
        guard
            case .over? = BankApp.verdict(Self.refusal(400, "invalid_code", remaining: 0), tries: &tries, texted: false),
            case .over(let locked)? = BankApp.verdict(
                Self.refusal(429, "too_many_attempts", retryAfter: 20), tries: &tries, texted: true),
            case .over("That code is wrong, and that was the last try.")? = BankApp.verdict(
                Self.refusal(403, "attempts_exhausted"), tries: &tries, texted: false),
            case .over(BankApp.frozen)? = BankApp.verdict(
                Self.refusal(403, "second_factor_frozen"), tries: &tries, texted: false),
            case .newCode? = BankApp.verdict(Self.refusal(404, "enrollment_not_found"), tries: &tries, texted: true),
            case .newCode? = BankApp.verdict(Self.refusal(404, "authorization_not_found"), tries: &tries, texted: true)
        else {
            Issue.record("wrong verdicts")
            return
        }
        #expect(locked == "Too many wrong codes. Please try again in 20 seconds.")
        #expect(BankApp.verdict(Self.refusal(401, "unauthenticated"), tries: &tries, texted: true) == nil)
    }
}
