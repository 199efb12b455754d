import API
import Core
import Crypto
import Foundation
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
    let env: Environment
    var kind: String { "passkey" }
    /// RFC 8176: a hardware-bound key (`hwk`) released after user verification.
    var method: String { "hwk" }
    var enrollable: Bool { true }
    static let challengeLifetime: Int64 = 5 * 60_000

    func beginEnrollment(_ request: StartEnrollmentRequest, user: UserRecord, factorID: String, context: AuditContext) throws -> EnrollmentDraft {
        let challenge = Base64URL.encode(env.random.bytes(32))
        let existing = try env.read { try FactorRepository.list(userID: user.id, on: $0) }.compactMap { $0.credentialID }
        let options = CreationOptions(rpID: env.configuration.rpID, rpName: env.configuration.rpName, userID: Base64URL.encode(Array(user.id.utf8)),
                                      userName: user.email, displayName: user.displayName ?? user.email, challenge: challenge,
                                      exclude: existing.map { CredentialDescriptor(id: $0) })
        return EnrollmentDraft(kind: kind, userID: user.id, factorID: factorID, displayName: try FactorName.parse(request.deviceName, field: "device_name") ?? "Passkey", challenge: challenge,
                               response: EnrollmentStarted(options: options))
    }

    func finishEnrollment(_ draft: EnrollmentDraft, proof: Proof, context: AuditContext) throws -> FactorRecord? {
        guard let credential = proof.credential, let attestation = credential.response.attestationObject.flatMap(Base64URL.decode),
              let clientData = Base64URL.decode(credential.response.clientDataJSON), let challenge = draft.challenge.flatMap(Base64URL.decode)
        else { return nil }
        let result: RegistrationResult
        do {
            result = try WebAuthnVerifier.verifyRegistration(clientDataJSON: clientData, attestationObject: attestation, expectedChallenge: challenge,
                                                             rp: relyingParty, requireUserVerification: true)
        } catch {
            // The enrollment route audits the failure; the reason goes to the log.
            env.logger.log("info", "passkey_registration_refused", ["reason": .string(error.reason.rawValue)])
            return nil
        }
        let id = Base64URL.encode(result.credentialID)
        if try env.read({ try FactorRepository.passkey(credentialID: id, on: $0) }) != nil { throw APIError.secondFactorExists }
        return FactorRecord(id: draft.factorID, userID: draft.userID, kind: kind, displayName: draft.displayName, phone: nil, secretSealed: nil,
                            publicKey: Data(result.publicKey.cose).base64EncodedString(), credentialID: id, signCount: Int64(result.signCount),
                            transports: credential.response.transports?.joined(separator: ","), backupEligible: result.backupEligible,
                            backedUp: result.backedUp, createdAt: env.nowMillis, lastUsedAt: nil)
    }

    func challenge(_ factor: FactorRecord, purpose: Purpose, context: AuditContext) throws -> String? {
        // For a bound action: 16 random bytes and the action's hash, so the signature covers the action.
        var bytes = env.random.bytes(16)
        bytes += purpose.actionHash.flatMap(Self.hexBytes) ?? env.random.bytes(16)
        let challenge = Base64URL.encode(bytes)
        try env.transaction { try FactorRepository.insertChallenge(challenge, factor: factor, purpose: purpose.key, id: env.newID(), at: env.nowMillis, on: $0) }
        return challenge
    }

    /// The options for `navigator.credentials.get` with `challenge`.
    func requestOptions(challenge: String, factors: [FactorRecord]) -> RequestOptions {
        RequestOptions(challenge: challenge, rpID: env.configuration.rpID, allow: factors.compactMap { f in
            f.credentialID.map { CredentialDescriptor(id: $0, transports: f.transports?.split(separator: ",").map(String.init)) }
        })
    }

    func verify(_ factor: FactorRecord, proof: Proof, purpose: Purpose, context: AuditContext) throws -> Bool {
        guard let credential = proof.credential, credential.id == factor.credentialID else { return false }
        // Everything that needs no stored state is checked before the transaction opens.
        let parsed: ParsedAssertion
        do {
            parsed = try parse(credential)
        } catch {
            try env.audit(context.event(.mfaFailed, .failure, userID: factor.userID, detail: "passkey assertion refused: \(error.reason.rawValue)"))
            return false
        }
        return try env.transaction { db in
            let now = env.nowMillis
            guard let (rowID, text) = try FactorRepository.latestChallenge(factorID: factor.id, purpose: purpose.key,
                                                                           since: now - Self.challengeLifetime, on: db),
                  let challenge = Base64URL.decode(text)
            else { return false }
            // Claimed first: a failed or raced attempt spends the challenge too.
            guard try FactorRepository.spendChallenge(id: rowID, at: now, on: db) else { return false }
            return try assert(parsed, factor: factor, challenge: challenge, context: context, on: db)
        }
    }

    /// The checks of an assertion that need no stored state (WebAuthn §7.2
    /// up to the challenge): run before any transaction opens.
    /// - Throws: `WebAuthnError` when the assertion is malformed or fails them.
    func parse(_ credential: CredentialJSON) throws(WebAuthnError) -> ParsedAssertion {
        guard let clientData = Base64URL.decode(credential.response.clientDataJSON),
              let authData = credential.response.authenticatorData.flatMap(Base64URL.decode),
              let signature = credential.response.signature.flatMap(Base64URL.decode)
        else { throw WebAuthnError(.malformed, detail: "assertion fields are not base64url") }
        return try WebAuthnVerifier.parseAssertion(clientDataJSON: clientData, authenticatorData: authData, signature: signature,
                                                   rp: relyingParty, requireUserVerification: true)
    }

    /// Verifies a parsed assertion of `factor` for `challenge` and records its counter.
    func assert(_ parsed: ParsedAssertion, factor: FactorRecord, challenge: [UInt8], context: AuditContext, on db: any SQLConnection) throws -> Bool {
        guard let cose = factor.publicKey.flatMap({ Data(base64Encoded: $0) }), let key = try? CredentialPublicKey(cose: Array(cose)) else { return false }
        do {
            let result = try WebAuthnVerifier.verifyAssertion(parsed, expectedChallenge: challenge, publicKey: key,
                                                              storedSignCount: UInt32(clamping: factor.signCount ?? 0))
            guard try FactorRepository.recordAssertion(id: factor.id, signCount: Int64(result.signCount), backedUp: result.backedUp, at: env.nowMillis, on: db) else {
                try AuditLog.append(context.event(.mfaFailed, .failure, userID: factor.userID,
                                                  detail: "passkey \(factor.id) signature counter did not increase: possibly cloned"), at: env.nowMillis, on: db)
                return false
            }
            return true
        } catch let error as WebAuthnError {
            let detail = error.reason == .signCountRegression
                ? "passkey \(factor.id) signature counter did not increase: possibly cloned" : "passkey assertion refused: \(error.reason.rawValue)"
            try AuditLog.append(context.event(.mfaFailed, .failure, userID: factor.userID, detail: detail), at: env.nowMillis, on: db)
            return false
        }
    }

    /// The relying party; dev mode also allows `http://localhost:<any port>`.
    var relyingParty: RelyingParty {
        RelyingParty(id: env.configuration.rpID, name: env.configuration.rpName, origins: env.configuration.origins,
                     allowsAnyLocalhostPort: env.configuration.dev)
    }

    private static func hexBytes(_ hex: String) -> [UInt8]? {
        let chars = Array(hex.utf8)
        guard chars.count == 64 else { return nil }
        return stride(from: 0, to: 64, by: 2).compactMap { UInt8(String(decoding: chars[$0..<$0 + 2], as: UTF8.self), radix: 16) }
    }

}
