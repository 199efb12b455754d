import API
import Core
import Crypto
import Foundation
import Logging
import Store
import WebAuthn

/// A WebAuthn passkey with user verification (Touch ID, Face ID, Windows
/// Hello, Android): the server never sees a fingerprint or a face, only a
/// signature the authenticator made after the check, and the UV flag saying
/// so. Registration and assertions are verified step by step (WebAuthn L3
/// §7.1, §7.2); the COSE key, signature counter, transports and backup flags
/// are kept. A counter that does not increase marks a possible clone: the
/// assertion is refused and audited. For a bound action the challenge
/// carries the action's hash, so the signature covers the action.
struct PasskeyFactor: SecondFactor {
    let transactions: Transactions
    let random: RandomSource
    let relyingParty: RelyingParty
    let logger: Logger
    var kind: Factor.Kind { .passkey }
    static let challengeLifetime: Int64 = 5 * 60_000

    func beginEnrollment(
        _ request: StartEnrollmentRequest, user: UserRecord, factorID: FactorID, client: AuditContext, now: Date
    ) throws -> EnrollmentStart {
        let name = try FactorName.parse(request.deviceName, field: "device_name") ?? "Passkey"
        let challenge = Base64URL.encode(random.bytes(32))
        let existing = try transactions.read { try FactorRepository.list(user.id, on: $0) }.compactMap {
            factor -> CredentialDescriptor? in
            if case .passkey(let passkey) = factor.credential { return CredentialDescriptor(id: passkey.credentialID) }
            return nil
        }
        let options = CreationOptions(
            rpID: relyingParty.id, rpName: relyingParty.name, userID: Base64URL.encode(Array(user.id.raw.utf8)),
            userName: user.email, displayName: user.displayName ?? user.email, challenge: challenge, exclude: existing)
        return EnrollmentStart(pending: .passkey(challenge: challenge), displayName: name, offer: .passkey(options))
    }

    func finishEnrollment(
        _ draft: EnrollmentDraft, proof: EnrollmentProof, client: AuditContext, now: Date, on db: any SQLConnection
    ) throws -> EnrolledCredential? {
        guard case .registration(let credential) = proof, case .passkey(let challengeText) = draft.pending,
            let attestation = credential.response.attestationObject.flatMap(Base64URL.decode),
            let clientData = Base64URL.decode(credential.response.clientDataJSON),
            let challenge = Base64URL.decode(challengeText)
        else { return nil }
        let result: RegistrationResult
        do {
            result = try WebAuthnVerifier.verifyRegistration(
                clientDataJSON: clientData, attestationObject: attestation, expectedChallenge: challenge,
                rp: relyingParty, requireUserVerification: true)
        } catch {
            // The enrollment service audits the failure; the reason goes to the log.
            logger.log(.info, "passkey_registration_refused", ["reason": .string(error.reason.rawValue)])
            return nil
        }
        let id = Base64URL.encode(result.credentialID)
        if try FactorRepository.passkey(credentialID: id, on: db) != nil { throw SecondFactorFailure.exists }
        let transports = (credential.response.transports ?? []).filter {
            !$0.isEmpty && $0.count <= 32 && !$0.contains(",")
        }.prefix(8)
        return EnrolledCredential(
            credential: .passkey(
                Passkey(
                    credentialID: id, key: result.publicKey, signCount: result.signCount,
                    transports: Array(transports), backupEligible: result.backupEligible,
                    backedUp: result.backedUp)))
    }

    func challenge(_ factor: Factor, purpose: Purpose, intent: CodeIntent, client: AuditContext, now: Date) throws
        -> ChallengeIssued
    {
        guard case .passkey(let passkey) = factor.credential else { throw SecondFactorFailure.unusable }
        // For a bound action: 16 random bytes and the action's hash, so the signature covers the action.
        let bytes = random.bytes(16) + (purpose.actionHash.flatMap { Hex.decode($0) } ?? random.bytes(16))
        let challenge = Base64URL.encode(bytes)
        try transactions.write { db in
            try FactorRepository.insertChallenge(
                id: .random(using: random), factor: factor, purpose: purpose, challenge: challenge, verification: nil,
                at: now.millis, on: db)
        }
        return .passkey(requestOptions(challenge: challenge, allow: [passkey.descriptor]))
    }

    func verify(
        _ factor: Factor, proof: Proof, purpose: Purpose, client: AuditContext, now: Date, on db: any SQLConnection
    ) throws -> Bool {
        guard case .assertion(let credentialID, let parsed) = proof, case .passkey(let passkey) = factor.credential,
            credentialID == passkey.credentialID,
            case let live = try FactorRepository.liveChallenges(
                factor.id, purpose: purpose, since: now.millis - Self.challengeLifetime, on: db),
            // The challenge the assertion names, else the newest (spent by this failed try).
            let (id, text) = live.first(where: { Base64URL.decode($0.challenge) == parsed.challenge }) ?? live.first,
            let challenge = Base64URL.decode(text)
        else { return false }
        // Claimed first: a failed or raced attempt spends the challenge too.
        guard try FactorRepository.spendChallenge(id, at: now.millis, on: db) else { return false }
        return try assert(
            parsed, factor: factor, passkey: passkey, challenge: challenge, client: client, now: now, on: db)
    }

    /// The checks of an assertion that need no stored state (WebAuthn §7.2
    /// up to the challenge): run before any transaction opens.
    /// - Throws: `WebAuthnError` when the assertion is malformed or fails them.
    func parse(_ credential: CredentialJSON) throws(WebAuthnError) -> ParsedAssertion {
        guard let clientData = Base64URL.decode(credential.response.clientDataJSON),
            let authData = credential.response.authenticatorData.flatMap(Base64URL.decode),
            let signature = credential.response.signature.flatMap(Base64URL.decode)
        else { throw WebAuthnError(.malformed, detail: "assertion fields are not base64url") }
        return try WebAuthnVerifier.parseAssertion(
            clientDataJSON: clientData, authenticatorData: authData, signature: signature,
            rp: relyingParty, requireUserVerification: true)
    }

    /// The proof a passkey credential makes: parsed now, refused like a wrong code if it fails its stateless checks.
    func proof(_ credential: CredentialJSON) -> Proof {
        do { return .assertion(credentialID: credential.id, try parse(credential)) } catch {
            return .refusedAssertion(error)
        }
    }

    /// Verifies a parsed assertion of `passkey` for `challenge` and records its counter.
    func assert(
        _ parsed: ParsedAssertion, factor: Factor, passkey: Passkey, challenge: [UInt8], client: AuditContext,
        now: Date,
        on db: any SQLConnection
    ) throws -> Bool {
        let clone = "passkey \(factor.id.raw) signature counter did not increase: possibly cloned"
        do {
            let result = try WebAuthnVerifier.verifyAssertion(
                parsed, expectedChallenge: challenge, publicKey: passkey.key, storedSignCount: passkey.signCount)
            guard
                try FactorRepository.recordAssertion(
                    factor.id, signCount: result.signCount, backedUp: result.backedUp, at: now.millis, on: db)
            else {
                try AuditLog.append(
                    client.event(.mfaFailed, .failure, userID: factor.userID, detail: clone), at: now.millis, on: db)
                return false
            }
            return true
        } catch let error as WebAuthnError {
            let detail =
                error.reason == .signCountRegression ? clone : "passkey assertion refused: \(error.reason.rawValue)"
            try AuditLog.append(
                client.event(.mfaFailed, .failure, userID: factor.userID, detail: detail), at: now.millis, on: db)
            return false
        }
    }

    /// The options for `navigator.credentials.get` with `challenge`.
    func requestOptions(challenge: String, allow: [CredentialDescriptor]) -> RequestOptions {
        RequestOptions(challenge: challenge, rpID: relyingParty.id, allow: allow)
    }
}
