import Core
import Crypto

/// The relying-party checks of WebAuthn Level 3 §7.1 (registration) and
/// §7.2 (authentication). Pure functions: the caller supplies the expected
/// challenge, the stored key and counter, and persists the results.
package enum WebAuthnVerifier {
    /// Longest credential ID accepted (WebAuthn §7.1 step 24 / L3: 1023 bytes).
    package static let maximumCredentialIDLength = 1023

    /// Verifies a registration (`navigator.credentials.create`) response per
    /// WebAuthn L3 §7.1.
    ///
    /// Checks clientDataJSON (type `webauthn.create`, challenge, origin, no
    /// `crossOrigin: true`), the attestation object (`fmt`, `attStmt`,
    /// `authData`), the RP ID hash, UP, UV when required, BS only with BE,
    /// attested credential data, credential ID length, allowed algorithm, and
    /// the attestation statement: `none` (empty) or `packed` self attestation
    /// (`alg` equal to the credential key's, `sig` over authData ‖
    /// SHA-256(clientDataJSON) with the credential key).
    /// - Important: Attestation certificates (`x5c`) are not verified, so
    ///   `packed` with `x5c` and every other format are refused.
    /// - Throws: `WebAuthnError` naming the first check that failed.
    package static func verifyRegistration(
        clientDataJSON: [UInt8], attestationObject: [UInt8], expectedChallenge: [UInt8], rp: RelyingParty,
        requireUserVerification: Bool, allowedAlgorithms: Set<COSEAlgorithm> = [.es256, .edDSA, .rs256]
    ) throws(WebAuthnError) -> RegistrationResult {
        let challenge = try checkClientData(clientDataJSON, type: "webauthn.create", rp: rp)
        guard ConstantTime.equals(challenge, expectedChallenge) else { throw WebAuthnError(.challengeMismatch) }
        let object = try CBOR.decode(attestationObject)
        guard case .text(let format)? = object[text: "fmt"], case .map(let statement)? = object[text: "attStmt"],
            case .bytes(let authDataBytes)? = object[text: "authData"]
        else { throw WebAuthnError(.malformed, detail: "attestation object lacks fmt/attStmt/authData") }

        let authData = try AuthenticatorData(authDataBytes)
        try checkFlags(authData, rp: rp, requireUserVerification: requireUserVerification)
        guard let credentialID = authData.credentialID, let aaguid = authData.aaguid,
            let key = authData.credentialPublicKey
        else {
            throw WebAuthnError(.malformed, detail: "no attested credential data")
        }
        guard credentialID.count <= maximumCredentialIDLength else {
            throw WebAuthnError(.credentialTooLong, detail: "credential ID of \(credentialID.count) bytes")
        }
        guard allowedAlgorithms.contains(key.algorithm) else {
            throw WebAuthnError(.algorithmNotAllowed, detail: "\(key.algorithm)")
        }
        switch format {
        case "none":
            guard statement.isEmpty else { throw WebAuthnError(.malformed, detail: "non-empty attStmt for none") }
        case "packed":
            try verifyPackedSelfAttestation(
                statement, key: key, signedData: authDataBytes + SHA256.hash(clientDataJSON))
        default:
            throw WebAuthnError(.unsupportedAttestation, detail: "fmt \(format)")
        }
        return RegistrationResult(
            credentialID: credentialID, publicKey: key, signCount: authData.signCount,
            backupEligible: authData.backupEligible, backedUp: authData.backedUp, userVerified: authData.userVerified,
            aaguid: aaguid, format: format
        )
    }

    /// Verifies an assertion (`navigator.credentials.get`) per WebAuthn L3 §7.2:
    /// `parseAssertion` followed by `verifyAssertion(_:expectedChallenge:publicKey:storedSignCount:)`.
    /// - Important: Persist the returned `signCount` only after this returns.
    /// - Throws: `WebAuthnError` naming the first check that failed;
    ///   `.signCountRegression` suggests a cloned authenticator.
    package static func verifyAssertion(
        clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8], expectedChallenge: [UInt8],
        rp: RelyingParty,
        publicKey: CredentialPublicKey, storedSignCount: UInt32, requireUserVerification: Bool
    ) throws(WebAuthnError) -> AssertionResult {
        let parsed = try parseAssertion(
            clientDataJSON: clientDataJSON, authenticatorData: authenticatorData, signature: signature,
            rp: rp, requireUserVerification: requireUserVerification)
        return try verifyAssertion(
            parsed, expectedChallenge: expectedChallenge, publicKey: publicKey, storedSignCount: storedSignCount)
    }

    /// The checks of §7.2 that need no stored state: clientDataJSON (type
    /// `webauthn.get`, a base64url challenge, origin, no `crossOrigin: true`),
    /// the authenticator data's layout, RP ID hash, UP, UV when required, and
    /// BS only with BE. Run it before opening a transaction.
    /// - Throws: `WebAuthnError` naming the first check that failed.
    package static func parseAssertion(
        clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8], rp: RelyingParty,
        requireUserVerification: Bool
    ) throws(WebAuthnError) -> ParsedAssertion {
        let challenge = try checkClientData(clientDataJSON, type: "webauthn.get", rp: rp)
        let authData = try AuthenticatorData(authenticatorData)
        try checkFlags(authData, rp: rp, requireUserVerification: requireUserVerification)
        guard !signature.isEmpty, signature.count <= 1024 else {
            throw WebAuthnError(.malformed, detail: "signature of \(signature.count) bytes")
        }
        return ParsedAssertion(
            challenge: challenge, clientDataJSON: clientDataJSON, authenticatorData: authenticatorData,
            authData: authData,
            signature: signature)
    }

    /// The rest of §7.2: the challenge is the one issued (constant time), the
    /// signature over authenticatorData ‖ SHA-256(clientDataJSON) verifies
    /// under `publicKey`, and when the stored or the new counter is non-zero,
    /// the new one is greater.
    /// - Important: Persist the returned `signCount` only after this returns.
    /// - Throws: `.challengeMismatch`, `.badSignature`, or
    ///   `.signCountRegression` (a possibly cloned authenticator).
    package static func verifyAssertion(
        _ parsed: ParsedAssertion, expectedChallenge: [UInt8], publicKey: CredentialPublicKey, storedSignCount: UInt32
    ) throws(WebAuthnError) -> AssertionResult {
        guard ConstantTime.equals(parsed.challenge, expectedChallenge) else { throw WebAuthnError(.challengeMismatch) }
        guard
            publicKey.verify(
                signature: parsed.signature, data: parsed.authenticatorData + SHA256.hash(parsed.clientDataJSON))
        else {
            throw WebAuthnError(.badSignature, detail: "assertion signature")
        }
        let signCount = parsed.authData.signCount
        if (storedSignCount != 0 || signCount != 0) && signCount <= storedSignCount {
            throw WebAuthnError(.signCountRegression, detail: "stored \(storedSignCount), received \(signCount)")
        }
        return AssertionResult(
            signCount: signCount, userVerified: parsed.authData.userVerified, backedUp: parsed.authData.backedUp)
    }

    // MARK: - Shared steps

    /// clientDataJSON: type, origin, crossOrigin; returns the challenge it names.
    static func checkClientData(_ json: [UInt8], type: String, rp: RelyingParty) throws(WebAuthnError) -> [UInt8] {
        let clientData = try CollectedClientData.parse(json)
        guard clientData.type == type else { throw WebAuthnError(.wrongType, detail: "type \(clientData.type)") }
        guard let challenge = Base64URL.decode(clientData.challenge) else { throw WebAuthnError(.challengeMismatch) }
        guard rp.allows(origin: clientData.origin) else {
            throw WebAuthnError(.originMismatch, detail: "origin \(clientData.origin)")
        }
        guard clientData.crossOrigin != true else { throw WebAuthnError(.originMismatch, detail: "crossOrigin true") }
        return challenge
    }

    /// RP ID hash, UP, UV when required, BS only with BE.
    static func checkFlags(_ authData: AuthenticatorData, rp: RelyingParty, requireUserVerification: Bool)
        throws(WebAuthnError)
    {
        guard ConstantTime.equals(authData.rpIDHash, SHA256.hash(Array(rp.id.utf8))) else {
            throw WebAuthnError(.rpIDMismatch)
        }
        guard authData.userPresent else { throw WebAuthnError(.userNotPresent) }
        guard authData.userVerified || !requireUserVerification else { throw WebAuthnError(.userNotVerified) }
        guard authData.backupEligible || !authData.backedUp else { throw WebAuthnError(.backupStateInconsistent) }
    }

    /// `packed` self attestation (§8.2): `{alg, sig}` only, `alg` equal to the
    /// credential key's, `sig` valid under the credential key.
    static func verifyPackedSelfAttestation(_ statement: [CBOR.Entry], key: CredentialPublicKey, signedData: [UInt8])
        throws(WebAuthnError)
    {
        let map = CBOR.map(statement)
        if map[text: "x5c"] != nil || map[text: "ecdaaKeyId"] != nil {
            throw WebAuthnError(.unsupportedAttestation, detail: "packed with a certificate chain")
        }
        guard statement.count == 2, let alg = map[text: "alg"]?.int, case .bytes(let signature)? = map[text: "sig"]
        else {
            throw WebAuthnError(.malformed, detail: "packed attStmt is not {alg, sig}")
        }
        guard alg == key.algorithm.rawValue else {
            throw WebAuthnError(.badSignature, detail: "packed alg \(alg) differs from the key's")
        }
        guard key.verify(signature: signature, data: signedData) else {
            throw WebAuthnError(.badSignature, detail: "packed self signature")
        }
    }
}
