import API
import Core
import Crypto
import Foundation
import Store
import WebAuthn

/// Signing in without a password: with a discoverable passkey (the
/// assertion names its credential; user verification is required, so the
/// session is AAL2: possession and user verification), or with the email
/// and an approval on the user's device (AAL1: possession of the device key
/// only, its biometric gate cannot be verified from here).
///
/// To tell nobody which addresses have a device, every address gets the same
/// answer to a push: an address without one gets a decoy approval that no
/// device sees, which stays pending and expires like a real one, and the
/// same per-address limit (3 per 10 minutes) counts both.
struct PasswordlessService: Sendable {
    let transactions: Transactions
    let clock: Clock
    let random: RandomSource
    let signInPerIP: RateLimiter.Limit
    let issuer: SessionIssuer
    let passkeys: PasskeyFactor
    let push: PushService
    let changes: ChangeFeed

    // MARK: Passkeys

    /// A challenge for a discoverable passkey (an empty allow list).
    /// - Throws: `CommonFailure.rateLimited`.
    func passkeyOptions(client: AuditContext) throws -> RequestOptions {
        let challenge = Base64URL.encode(random.bytes(32))
        let now = clock.now().millis
        try transactions.write { db in
            if let wait = try RateLimiter.take(
                "signin:ip:\(client.clientKey)", limit: signInPerIP, nowMillis: now, on: db)
            {
                throw CommonFailure.rateLimited(retryAfter: wait)
            }
            try PasskeyLoginRepository.insert(challenge: challenge, now: now, on: db)
        }
        return passkeys.requestOptions(challenge: challenge, allow: [])
    }

    /// Signs in with a passkey's assertion. Everything that needs no stored
    /// state is checked before the transaction opens; then the challenge must
    /// be one issued, unused and fresh (it is spent either way).
    /// - Throws: `SignInFailure.passkeyRefused` for every refusal (a passkey
    ///   names no account, so saying so reveals nothing).
    func signIn(with credential: CredentialJSON, client: AuditContext) throws -> (token: String, session: SessionRecord)
    {
        let now = clock.now()
        let parsed: ParsedAssertion
        do {
            parsed = try passkeys.parse(credential)
        } catch {
            try transactions.write {
                try AuditLog.append(
                    client.event(
                        .signInFailed, .failure, detail: "passkey assertion refused: \(error.reason.rawValue)"),
                    at: now.millis, on: $0)
            }
            throw SignInFailure.passkeyRefused
        }
        let issued = try transactions.write { db -> (token: String, session: SessionRecord)? in
            guard
                try PasskeyLoginRepository.spend(
                    challenge: Base64URL.encode(parsed.challenge), now: now.millis,
                    issuedAfter: now.millis - PasskeyFactor.challengeLifetime, on: db),
                let factor = try FactorRepository.passkey(credentialID: credential.id, on: db),
                case .passkey(let passkey) = factor.credential,
                try passkeys.assert(
                    parsed, factor: factor, passkey: passkey, challenge: parsed.challenge, client: client, now: now,
                    on: db)
            else {
                try AuditLog.append(client.event(.signInFailed, .failure, detail: "passkey"), at: now.millis, on: db)
                return nil
            }
            let proofs = SessionIssuer.Proofs(
                aal: .aal2, methods: [.hwk, .user], passwordVerifiedAt: nil, secondFactor: true)
            return try issuer.issue(
                userID: factor.userID, proofs, client: client, detail: "passwordless passkey=\(factor.id.raw)",
                now: now.millis, on: db)
        }
        guard let issued else { throw SignInFailure.passkeyRefused }
        return issued
    }

    // MARK: Push

    /// A passwordless push for `email`: the same answer for every address.
    /// - Throws: `CommonFailure.invalidFields`, `.rateLimited`.
    func startPush(email rawEmail: String, client: AuditContext) throws -> (
        pendingCredential: String, approval: PushService.Created
    ) {
        guard let email = EmailAddress(rawEmail) else {
            throw CommonFailure.invalid("email", "is not a valid email address")
        }
        let now = clock.now().millis
        let credential = SessionToken.generate(random)
        let purpose = Purpose.signIn(pendingHash: SHA256.hex(credential))
        let emailKey = SHA256.hex(email.value)
        let (number, choices) = push.numbers()
        let id = ApprovalID.random(using: random)
        let device = try transactions.write { db -> Factor? in
            if let wait = try RateLimiter.take(
                "signin:ip:\(client.clientKey)", limit: signInPerIP, nowMillis: now, on: db)
            {
                throw CommonFailure.rateLimited(retryAfter: wait)
            }
            let recent = try PushRepository.count(emailKey: emailKey, since: now - PushService.window, on: db)
            guard recent < PushService.maxPerWindow else { throw CommonFailure.rateLimited(retryAfter: 600) }
            let user = try AccountRepository.find(email: email.value, on: db)
            // A frozen second step pushes nothing: its address gets a decoy, as one without a device does.
            let device = try user.map {
                try LoginThrottle.isFrozen(secondFactorOf: $0.id, on: db) ? [] : FactorRepository.list($0.id, on: db)
            }?
            .filter { $0.kind == .device }
            .max { ($0.lastUsedAt ?? $0.createdAt) < ($1.lastUsedAt ?? $1.createdAt) }
            if let user, let device {
                try PendingSignInRepository.insertPending(
                    tokenHash: SHA256.hex(credential), userID: user.id, passwordVerifiedAt: nil, now: now, on: db)
                try PushRepository.insert(
                    id: id, userID: user.id, factorID: device.id, emailKey: emailKey, purpose: purpose, number: number,
                    choices: choices, client: client, now: now, on: db)
                try AuditLog.append(
                    client.event(
                        .pushSent, .success, userID: user.id,
                        detail: "approval=\(id.raw) device=\(device.id.raw) passwordless"),
                    at: now, on: db)
            } else {
                try PushRepository.insert(
                    id: id, userID: nil, factorID: nil, emailKey: emailKey, purpose: purpose, number: number,
                    choices: choices,
                    client: client, now: now, on: db)
                try AuditLog.append(
                    client.event(
                        .pushDenied, .denied, userID: user?.id,
                        detail: "passwordless push for an address without a device: decoy"),
                    at: now, on: db)
            }
            return device
        }
        if let device { changes.publish("device:\(device.id.raw)") }
        return (credential, PushService.Created(id: id, number: number))
    }

    /// Completes a passwordless push once the device approved it.
    /// - Throws: `SecondFactorFailure.invalidPendingCredential` for a malformed
    ///   credential, `.invalidCode` when the push is not (or no longer) approved.
    func completePush(pendingCredential: String, approvalID: ApprovalID, client: AuditContext) throws -> (
        token: String, session: SessionRecord
    ) {
        guard SessionToken.isWellFormed(pendingCredential) else { throw SecondFactorFailure.invalidPendingCredential }
        let tokenHash = SHA256.hex(pendingCredential)
        let now = clock.now().millis
        let issued = try transactions.write { db -> (token: String, session: SessionRecord)? in
            // The approval first: a decoy is never approved, so it fails here like an unapproved real one.
            guard
                let (deviceID, userID) = try PushRepository.consume(
                    approvalID, purpose: .signIn(pendingHash: tokenHash), now: now, on: db),
                try PendingSignInRepository.usePending(tokenHash: tokenHash, now: now, on: db),
                let userID
            else { return nil }
            // A push approved before the second step froze signs nobody in after.
            if try SecondFactorService.frozenApproval(userID, client: client, now: now, on: db) != nil { return nil }
            try FactorRepository.markUsed(deviceID, at: now, on: db)
            let device = try FactorRepository.device(deviceID, on: db)
            let proofs = SessionIssuer.Proofs(
                aal: .aal1, methods: device?.methods ?? [.hwk], passwordVerifiedAt: nil, secondFactor: false,
                deviceID: deviceID)
            return try issuer.issue(
                userID: userID, proofs, client: client,
                detail: "passwordless push" + (device.map { " " + SecondFactorService.boundDetail($0) } ?? ""),
                now: now, on: db)
        }
        guard let issued else { throw SecondFactorFailure.invalidCode }
        return issued
    }
}
