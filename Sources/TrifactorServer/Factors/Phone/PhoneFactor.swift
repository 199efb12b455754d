import API
import Core
import Foundation
import Messaging
import Phone
import Store

/// A phone that receives codes: SMS first, a voice call that speaks the code
/// if the SMS step times out. Codes go through the phone verification
/// service directly, under Trifactor's internal key, so its limits, attempt
/// counting, delivery and audit apply unchanged.
struct PhoneFactor: SecondFactor {
    let transactions: Transactions
    let random: RandomSource
    let verifications: PhoneVerificationService
    /// Named in the messages.
    let brand: String
    var kind: Factor.Kind { .phone }

    func beginEnrollment(
        _ request: StartEnrollmentRequest, user: UserRecord, factorID: FactorID, client: AuditContext, now: Date
    ) throws -> EnrollmentStart {
        guard let raw = request.phone else { throw CommonFailure.invalid("phone", "is required for a phone factor") }
        let number: PhoneNumber
        do {
            number = try PhoneNumber(parsing: raw, region: request.country)
        } catch {
            throw CommonFailure.invalid("phone", error.description)
        }
        guard number.canReceiveSMS else {
            throw CommonFailure.invalid(
                "phone",
                "cannot receive SMS (it is a \(number.kind.rawValue.replacingOccurrences(of: "_", with: " ")) number)")
        }
        let enrolled = try transactions.read { try FactorRepository.list(user.id, on: $0) }
        if enrolled.contains(where: { $0.credential.phone == number }) { throw SecondFactorFailure.exists }
        // One enrollment code per user and number: enrolling it again ("Send a new code") replaces the code before,
        // whose voice call would otherwise read an old code out two minutes later. Another user's enrollment of the
        // same number keeps its own.
        let verification = try send(
            to: number, intent: .code, locale: user.locale, userID: user.id, scope: "enroll:\(user.id.raw)",
            client: client)
        return EnrollmentStart(
            pending: .phone(number, verification: verification), displayName: "Phone ending \(number.digits.suffix(4))",
            offer: .phone(maskedPhone: number.masked))
    }

    func finishEnrollment(
        _ draft: EnrollmentDraft, proof: EnrollmentProof, client: AuditContext, now: Date, on db: any SQLConnection
    ) throws -> EnrolledCredential? {
        guard case .code(let code) = proof, case .phone(let number, let verification) = draft.pending else {
            return nil
        }
        let completed = try verifications.check(
            verification, code: code, key: .internalMFA, client: client, now: now, on: db)
        return completed ? EnrolledCredential(credential: .phone(number)) : nil
    }

    func challenge(_ factor: Factor, purpose: Purpose, intent: CodeIntent, client: AuditContext, now: Date) throws
        -> ChallengeIssued
    {
        guard case .phone(let number) = factor.credential else { throw SecondFactorFailure.unusable }
        let locale = try transactions.read { try AccountRepository.find(id: factor.userID, on: $0)?.locale }
        // The challenge row commits with the verification: a failure between two commits left the new code's text on
        // its way and the superseded one checked.
        _ = try send(
            to: number, intent: intent, locale: locale, userID: factor.userID, scope: purpose.key, client: client
        ) { verification, db in
            try FactorRepository.insertChallenge(
                id: .random(using: random), factor: factor, purpose: purpose, challenge: nil,
                verification: verification,
                at: now.millis, on: db)
        }
        return .none
    }

    /// "Call me instead": the running challenge for `purpose` places its voice call now
    /// (its workflow's next step), speaking the same code. Nothing happens when the call went already.
    /// - Throws: `SecondFactorFailure.unusable` when no text was sent for this purpose.
    func callNow(_ factor: Factor, purpose: Purpose, client: AuditContext) throws {
        guard
            let verification = try transactions.read({
                try Self.latestVerification(factor.id, purpose: purpose, on: $0)
            })
        else {
            throw SecondFactorFailure.unusable
        }
        do {
            try verifications.nextWorkflow(verification, key: .internalMFA, client: client)
        } catch PhoneVerificationFailure.noMoreEvents {
            // The call was placed already.
        } catch PhoneVerificationFailure.notFound {
            throw SecondFactorFailure.unusable
        }
    }

    /// Trifactor's own codes are 6 digits (test numbers never apply to its second factors).
    func malformed(_ proof: Proof, of factor: Factor) -> String? {
        guard case .code(let code) = proof else { return nil }
        return code.count == 6 && code.allSatisfy({ $0.isASCII && $0.isNumber })
            ? nil : "is the 6-digit code from the text message or the call"
    }

    func verify(
        _ factor: Factor, proof: Proof, purpose: Purpose, client: AuditContext, now: Date, on db: any SQLConnection
    ) throws -> Bool {
        guard case .code(let code) = proof,
            let verification = try Self.latestVerification(factor.id, purpose: purpose, on: db)
        else {
            return false
        }
        return try verifications.check(verification, code: code, key: .internalMFA, client: client, now: now, on: db)
    }

    /// The newest phone verification sent to `factor` for `purpose` (a code may be tried again until the verification ends).
    static func latestVerification(_ factor: FactorID, purpose: Purpose, on db: any SQLConnection) throws
        -> VerificationID?
    {
        // The running verification first: two challenges in one millisecond must not leave the one it superseded in front.
        let sent = try FactorRepository.verifications(factor, purpose: purpose, on: db)
        for id in sent where try !VerifyRepository.hasFinished(id, on: db) { return id }
        return sent.first
    }

    /// Starts an SMS-then-voice verification; a running one for the same number and `scope` (what
    /// it proves: another purpose keeps its own code) is replaced, in the same transaction: a start
    /// refused (rate limited, over budget) leaves the running one's code valid.
    private func send(
        to number: PhoneNumber, intent: CodeIntent, locale: String?, userID: UserID, scope: String,
        client: AuditContext, then: (VerificationID, any SQLConnection) throws -> Void = { _, _ in }
    ) throws -> VerificationID {
        // The relying party's name when its server named one, the server's otherwise. A hosted page's language
        // when it asked (the account's own locale when that is the same language: it keeps its region's voice).
        let texts = verifications.outbox.texts
        let accountLocale = texts.locale(user: locale)
        let spoken = client.language.map { texts.language(locale: accountLocale) == $0 ? accountLocale : $0 }
        let start = PhoneVerificationService.Start(
            brand: client.brand ?? brand, locale: spoken ?? accountLocale,
            steps: [.init(channel: .sms, to: number.digits), .init(channel: .voice, to: number.digits)],
            countryCodes: [number.countryCallingCode], channelTimeout: 120, codeLength: 6, customCode: nil,
            clientRef: nil, intent: intent, userID: userID, scope: scope, supersedesRunning: true)
        do {
            do {
                return try verifications.start(start, key: .internalMFA, client: client, then: then)
            } catch PhoneVerificationFailure.concurrent {
                // Another start for this number and scope committed meanwhile: this one replaces it in turn.
                return try verifications.start(start, key: .internalMFA, client: client, then: then)
            }
        } catch PhoneVerificationFailure.rateLimited(let wait), PhoneVerificationFailure.budgetExceeded(_, let wait) {
            throw CommonFailure.rateLimited(retryAfter: wait)
        } catch PhoneVerificationFailure.deliveryUnavailable {
            throw SecondFactorFailure.deliveryUnavailable
        } catch PhoneVerificationFailure.invalidParameters(let fields) {
            throw CommonFailure.invalid("phone", fields.first?.reason ?? "cannot receive codes")
        } catch is PhoneVerificationFailure {
            // Nothing else can refuse a start made this way.
            throw SecondFactorFailure.unusable
        }
    }
}
