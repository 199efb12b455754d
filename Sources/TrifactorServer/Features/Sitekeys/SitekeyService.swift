import API
import Core
import Foundation
import Sitekeys
import Store

/// The user's sitekey, and the browsers recognised for their account.
///
/// A password page shows the sitekey only on a browser recognised for the
/// account of the email typed (a cookie given after a sign-in that passed a
/// second factor); otherwise it shows one neutral sentence. The lookup starts
/// from the browser's cookie, never from the email, so an unknown email, an
/// unknown browser and another account's browser cost the same and look the
/// same.
struct SitekeyService: Sendable {
    /// The shared logic, over trifactord's table.
    static let browsers = RecognisedBrowsers(table: "known_browsers", owner: "user_id")

    let transactions: Transactions
    let clock: Clock
    let random: RandomSource

    /// The signed-in user's sitekey, nil when they chose none.
    /// - Throws: `CommonFailure.unavailable`.
    func sitekey(_ caller: Caller) throws -> Sitekey? {
        try transactions.read { db in
            try Self.requireSecondFactor(caller, on: db)
            return try SitekeyRepository.find(caller.user.id, on: db)
        }
    }

    /// A user with a second factor reads or changes their sitekey only in a session that passed it: a stolen password
    /// alone never reveals the sitekey a phishing page would need, nor replaces it with one of the thief's choice.
    /// - Throws: `SecondFactorFailure.secondFactorRequired`.
    static func requireSecondFactor(_ caller: Caller, on db: any SQLConnection) throws {
        guard caller.session.aal < .aal2 else { return }
        if try FactorRepository.list(caller.user.id, on: db).contains(where: { $0.kind.isStandalone }) {
            throw SecondFactorFailure.secondFactorRequired
        }
    }

    /// Sets the signed-in user's sitekey (audited with the picture's name, never the phrase).
    /// - Throws: `CommonFailure.invalidFields` (`picture`, `phrase`), `.unavailable`.
    func set(_ caller: Caller, picture: String, phrase: String, client: AuditContext) throws -> Sitekey {
        let sitekey: Sitekey
        do throws(Sitekey.Refusal) {
            sitekey = try Sitekey(picture: picture, phrase: phrase)
        } catch {
            let field = error == .unknownPicture ? "picture" : "phrase"
            throw CommonFailure.invalidFields([FieldProblem(name: field, reason: Self.reason(error))])
        }
        let now = clock.now().millis
        try transactions.write { db in
            try Self.requireSecondFactor(caller, on: db)
            try SitekeyRepository.save(sitekey, for: caller.user.id, now: now, on: db)
            try AuditLog.append(
                client.event(.sitekeySet, .success, userID: caller.user.id, detail: "picture=\(sitekey.picture)"),
                at: now, on: db)
        }
        return sitekey
    }

    /// The sitekey to show for `email` in the browser whose recognition cookie is `cookie`: the account's own when
    /// the browser is recognised for exactly that email's account, nil otherwise (a new browser, another email, no
    /// account at all).
    /// - Throws: `CommonFailure.unavailable`.
    func shown(email: String, cookie: String?, now: Date) throws -> Sitekey? {
        guard let cookie else { return nil }
        return try transactions.read { db in
            guard let owner = try Self.browsers.owner(of: cookie, now: now.millis, on: db),
                let user = try AccountRepository.find(id: UserID(owner), on: db),
                user.disabledAt == nil, EmailAddress(email)?.value == user.email
            else { return nil }
            return try SitekeyRepository.find(user.id, on: db)
        }
    }

    /// Recognises this browser (whose cookie is `current`, if any) for `userID` after a sign-in that passed a second
    /// factor; returns the cookie's value to set.
    /// - Throws: `CommonFailure.unavailable`.
    func recognise(_ userID: UserID, current: String?, client: AuditContext) throws -> String {
        let now = clock.now().millis
        return try transactions.write { db in
            let value = try Self.browsers.remember(
                userID.raw, current: current, fresh: { Base64URL.encode(random.bytes(32)) }, now: now, on: db)
            if value != current {
                try AuditLog.append(client.event(.browserRecognised, .success, userID: userID), at: now, on: db)
            }
            return value
        }
    }

    /// This browser is recognised no more (for whichever account it was).
    /// - Throws: `CommonFailure.unavailable`.
    func forget(_ cookie: String?, client: AuditContext) throws {
        let now = clock.now().millis
        try transactions.write { db in
            let owner = try Self.browsers.owner(of: cookie, now: now, on: db)
            if try Self.browsers.forget(cookie, on: db), let owner {
                try AuditLog.append(
                    client.event(.browserForgotten, .success, userID: UserID(owner)), at: now, on: db)
            }
        }
    }

    /// The API's sentence for a refused sitekey.
    static func reason(_ refusal: Sitekey.Refusal) -> String {
        switch refusal {
        case .unknownPicture: "must be one of: \(Sitekey.pictures.joined(separator: ", "))"
        case .phraseLength: "must have 3 to 40 characters"
        case .phraseCharacters: "may hold letters, digits, spaces and . , ! ? ' - only"
        }
    }
}
