import Core
import Foundation
import Store

/// Codes asked for by address (resending the email verification code, or a
/// password-reset code), in two halves so that the answer cannot tell an
/// account from an unknown address: the request does the same work for
/// every address (its rate limits and one row queued here), and a
/// background pass, a moment later, looks the address up and issues a code
/// when it belongs to an unverified account (a verification code) or to any
/// live account (a reset code). Issuing inline made the answer take 0.9 ms
/// for an unverified account against 0.6 ms for an unknown address.
///
/// A queued row holds the address and the requester's address and user
/// agent (for the audit entry) only until the next pass, within a second;
/// a row whose pass fails stays for the next one, for 10 minutes at most,
/// and goes with the account when it is erased.
struct EmailResends: Sendable {
    /// Rows taken per pass.
    static let batch = 50

    /// What a queued row asks for.
    enum Purpose: String, StoredValue {
        case verify
        case passwordReset = "reset"
    }

    let transactions: Transactions
    let clock: Clock
    let verification: EmailVerification
    let resets: PasswordResetCodes

    /// Queues a code for `email`, inside the request's transaction.
    static func queue(
        _ email: EmailAddress, purpose: Purpose = .verify, client: AuditContext, now: Int64, on db: any SQLConnection
    ) throws {
        try db.execute(
            "INSERT INTO email_resends (email, ip, user_agent, requested_at, purpose, brand) VALUES ($1, $2, $3, $4, $5, $6)",
            [
                .text(email.value), .text(client.ip), SQLValue(client.userAgent.map { String($0.prefix(512)) }),
                .int(now), purpose.sql,
                SQLValue(client.brand),
            ])
    }

    /// A queued row older than this is dropped unsent (a pass that kept
    /// failing on it must not hold the others, nor keep an address for long).
    static let stale: Int64 = 10 * 60 * 1000

    /// Drops the resends queued for `email` (its account is being erased).
    static func forget(email: String, on db: any SQLConnection) throws {
        try db.execute("DELETE FROM email_resends WHERE email = $1", [.text(email)])
    }

    /// Issues the codes queued so far; returns how many rows it took (a full
    /// batch: run again). Two instances never take one row twice: a row is
    /// deleted in the transaction that issues its code, one row a
    /// transaction, so a row that fails stays alone for the next pass (until
    /// it is `stale`), and the others go on.
    @discardableResult
    func drain() throws -> Int {
        let now = clock.now().millis
        let rows = try transactions.read { db in
            try db.query(
                "SELECT seq, email, purpose FROM email_resends ORDER BY seq LIMIT $1", [.int(Int64(Self.batch))]
            )
            .map { (seq: try $0.int("seq"), email: try $0.text("email"), purpose: try $0.value("purpose") as Purpose) }
        }
        guard !rows.isEmpty else { return 0 }
        try transactions.write {
            try $0.execute("DELETE FROM email_resends WHERE requested_at < $1", [.int(now - Self.stale)])
        }
        var issued: Set<String> = []
        var failure: (any Error)?
        for (seq, email, purpose) in rows {
            do {
                try transactions.write { db in
                    guard
                        let row = try db.queryOne(
                            "DELETE FROM email_resends WHERE seq = $1 RETURNING ip, user_agent, brand", [.int(seq)])
                    else { return }
                    // Several requests for one address in a pass send one code (the last one would void the others).
                    guard issued.insert("\(purpose.rawValue):\(email)").inserted,
                        let user = try AccountRepository.find(email: email, on: db)
                    else { return }
                    let client = AuditContext(
                        ip: try row.text("ip"), userAgent: try row.optionalText("user_agent"),
                        brand: try row.optionalText("brand"))
                    switch purpose {
                    case .verify:
                        guard user.emailVerifiedAt == nil else { return }
                        try verification.issue(for: user, brand: client.brand, now: now, on: db)
                        try AuditLog.append(
                            client.event(.emailVerificationSent, .success, userID: user.id), at: now, on: db)
                    case .passwordReset:
                        guard user.disabledAt == nil else { return }
                        try resets.issue(for: user, brand: client.brand, now: now, on: db)
                        try AuditLog.append(
                            client.event(.passwordResetRequested, .success, userID: user.id), at: now, on: db)
                    }
                }
            } catch {
                failure = failure ?? error
            }
        }
        // The periodic task logs it; the other rows were issued meanwhile.
        if let failure { throw failure }
        return rows.count
    }
}
