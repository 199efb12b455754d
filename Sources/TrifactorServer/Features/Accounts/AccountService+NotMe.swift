import Core
import Foundation
import Messaging
import Store

extension AccountService {
    /// "This wasn't me": the owner says a sign-in or a change on their security page was not theirs. In one
    /// transaction the password becomes `new` (the old one, which someone else may know, stops working), the factors
    /// the owner picked are removed, and everything that lets someone act as the user ends (`AccountLockdown`: every
    /// session, the owner's own too, with the apps' back-channel logouts; grants; sign-ins and pushes waiting); the
    /// owner is emailed. A second factor proven within the
    /// re-authentication window is required, as for a password change; the current password is not asked, since it
    /// may be what leaked. Rate-limited with password changes (5 a minute per user).
    /// - Returns: how many sessions ended.
    /// - Throws: `SecondFactorFailure.secondFactorRequired`, `CommonFailure.invalidFields` (`new_password` refused or
    ///   the same as the current one), `.rateLimited`.
    /// `removing`: the user's factors to remove with it (one someone else added would let them back in without the
    /// password); one that is not theirs, or gone meanwhile, is skipped.
    func reportNotMe(_ caller: Caller, newPassword new: String, removing: [FactorID] = [], client: AuditContext)
        throws -> Int
    {
        let now = clock.now().millis
        let user = caller.user
        guard caller.session.freshSecondFactor(now: now, window: reauthenticationWindow) else {
            throw SecondFactorFailure.secondFactorRequired
        }
        if let wait = try transactions.write({
            try RateLimiter.take(
                "password-change:\(user.id.raw)", limit: .init(burst: 5, rate: 1.0 / 60), nowMillis: now, on: $0)
        }) {
            throw CommonFailure.rateLimited(retryAfter: wait)
        }
        if let violation = passwordPolicy.violation(new, email: EmailAddress(user.email)) {
            throw CommonFailure.invalidFields([
                FieldProblem(name: "new_password", reason: passwordPolicy.explain(violation), violation: violation)
            ])
        }
        // The old password is the one to stop: keeping it would keep whoever else knows it.
        guard !hashing.verify(PasswordPolicy.normalize(new), user.passwordHash) else {
            throw CommonFailure.invalidFields([
                FieldProblem(name: "new_password", reason: "must differ from the current password")
            ])
        }
        let hash = try hashing.hash(PasswordPolicy.normalize(new))
        let ended = try transactions.write { db -> Int in
            guard try AccountRepository.replacePasswordHash(user.id, old: user.passwordHash, new: hash, on: db) else {
                throw CommonFailure.invalidFields([
                    FieldProblem(name: "new_password", reason: "your password changed meanwhile: sign in again")
                ])
            }
            for factor in Set(removing) {
                do {
                    try EnrollmentService.delete(
                        factor, of: user.id, why: "reported not me", client: client, now: now, on: db)
                } catch SecondFactorFailure.factorNotFound {}
            }
            let ended = try AccountLockdown.endEverything(
                of: user.id, reason: .reportedNotMe, hooks: endHooks, now: now, on: db)
            try outbox.enqueueEmail(
                "reported_not_me", to: user.email, language: outbox.texts.language(locale: nil, user: user.locale),
                values: client.branded(["sessions": .number(ended)]), now: now, on: db)
            try AuditLog.append(
                client.event(.reportedNotMe, .success, userID: user.id, detail: "sessions ended=\(ended)"), at: now,
                on: db)
            return ended
        }
        changes.publish("user:\(user.id.raw)")
        return ended
    }
}
