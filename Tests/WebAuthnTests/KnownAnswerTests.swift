import Testing
import WebAuthn

@Suite("Known-answer tests: W3C WebAuthn L3 §16 vectors and generated self-attestation fixtures")
struct KnownAnswerTests {
    func register(_ v: W3CVector) throws(WebAuthnError) -> RegistrationResult {
        try WebAuthnVerifier.verifyRegistration(
            clientDataJSON: [UInt8](hex: v.registrationClientDataJSON),
            attestationObject: [UInt8](hex: v.attestationObject),
            expectedChallenge: [UInt8](hex: v.registrationChallenge), rp: exampleRP, requireUserVerification: false)
    }

    func assert(_ v: W3CVector, key: CredentialPublicKey, stored: UInt32 = 0) throws(WebAuthnError) -> AssertionResult {
        try WebAuthnVerifier.verifyAssertion(
            clientDataJSON: [UInt8](hex: v.clientDataJSON), authenticatorData: [UInt8](hex: v.authenticatorData),
            signature: [UInt8](hex: v.signature), expectedChallenge: [UInt8](hex: v.assertionChallenge), rp: exampleRP,
            publicKey: key, storedSignCount: stored, requireUserVerification: false)
    }

    @Test("16.2 none.ES256: the registration verifies and yields the vector's credential")
    func noneES256Registration() throws {
        let result = try register(W3C.noneES256)
        #expect(result.format == "none")
        #expect(result.credentialID == [UInt8](hex: W3C.noneES256.credentialID))
        #expect(result.aaguid == [UInt8](hex: W3C.noneES256.aaguid))
        #expect(result.publicKey.algorithm == .es256)
        #expect(result.signCount == 0)
        #expect(result.backupEligible && result.backedUp && !result.userVerified)  // flags 0x59
    }

    @Test("16.2 none.ES256: the assertion verifies with the registered key")
    func noneES256Assertion() throws {
        let key = try register(W3C.noneES256).publicKey
        let result = try assert(W3C.noneES256, key: key)
        #expect(result.signCount == 0 && !result.userVerified && result.backedUp)  // flags 0x19
    }

    @Test("a key stored as COSE bytes verifies later assertions after being parsed again")
    func storedKeyRoundTrip() throws {
        let stored = try register(W3C.noneES256).publicKey.cose
        _ = try assert(W3C.noneES256, key: try CredentialPublicKey(cose: stored))
    }

    @Test("16.3 packed-self.ES256: the self signature verifies, then the assertion")
    func packedSelfES256() throws {
        let result = try register(W3C.packedSelfES256)
        #expect(result.format == "packed")
        #expect(result.credentialID == [UInt8](hex: W3C.packedSelfES256.credentialID))
        #expect(result.userVerified && result.backupEligible && result.backedUp)  // flags 0x5d
        let assertion = try assert(W3C.packedSelfES256, key: result.publicKey)
        #expect(!assertion.userVerified && !assertion.backedUp)  // flags 0x09
    }

    @Test("16.10 packed.RS256: the RS256 assertion verifies with the credential key from authData")
    func packedRS256Assertion() throws {
        let authData = try AuthenticatorData(attestationParts(W3C.packedRS256.attestationObject).authData)
        let key = try #require(authData.credentialPublicKey)
        #expect(key.algorithm == .rs256)
        #expect(authData.credentialID == [UInt8](hex: W3C.packedRS256.credentialID))
        #expect(authData.aaguid == [UInt8](hex: W3C.packedRS256.aaguid))
        _ = try assert(W3C.packedRS256, key: key)
    }

    @Test("16.11 packed.EdDSA: the Ed25519 assertion verifies with the credential key from authData")
    func packedEdDSAAssertion() throws {
        let authData = try AuthenticatorData(attestationParts(W3C.packedEdDSA.attestationObject).authData)
        let key = try #require(authData.credentialPublicKey)
        #expect(key.algorithm == .edDSA)
        _ = try assert(W3C.packedEdDSA, key: key)
    }

    @Test("packed attestation with an x5c certificate chain is refused as unsupported (16.7, 16.10, 16.11)")
    func packedWithCertificates() {
        #expect(reason { try register(W3C.packedRS256) } == .unsupportedAttestation)
        #expect(reason { try register(W3C.packedEdDSA) } == .unsupportedAttestation)
        #expect(
            reason {
                try WebAuthnVerifier.verifyRegistration(
                    clientDataJSON: [UInt8](hex: W3C.packedES256ClientDataJSON),
                    attestationObject: [UInt8](hex: W3C.packedES256AttestationObject),
                    expectedChallenge: [UInt8](hex: W3C.packedES256Challenge), rp: exampleRP,
                    requireUserVerification: false)
            } == .unsupportedAttestation)
    }

    @Test("16.4: a registration made with crossOrigin true is refused")
    func crossOrigin() {
        #expect(
            reason {
                try WebAuthnVerifier.verifyRegistration(
                    clientDataJSON: [UInt8](hex: W3C.crossOriginClientDataJSON),
                    attestationObject: [UInt8](hex: W3C.crossOriginAttestationObject),
                    expectedChallenge: [UInt8](hex: W3C.crossOriginChallenge), rp: exampleRP,
                    requireUserVerification: false)
            } == .originMismatch)
    }

    func register(_ v: GeneratedVector) throws(WebAuthnError) -> RegistrationResult {
        try WebAuthnVerifier.verifyRegistration(
            clientDataJSON: [UInt8](hex: v.registrationClientDataJSON),
            attestationObject: [UInt8](hex: v.attestationObject),
            expectedChallenge: [UInt8](hex: v.registrationChallenge), rp: exampleRP, requireUserVerification: true)
    }

    func assert(_ v: GeneratedVector, key: CredentialPublicKey, stored: UInt32) throws(WebAuthnError) -> AssertionResult
    {
        try WebAuthnVerifier.verifyAssertion(
            clientDataJSON: [UInt8](hex: v.clientDataJSON), authenticatorData: [UInt8](hex: v.authenticatorData),
            signature: [UInt8](hex: v.signature), expectedChallenge: [UInt8](hex: v.assertionChallenge), rp: exampleRP,
            publicKey: key, storedSignCount: stored, requireUserVerification: true)
    }

    @Test(
        "packed self attestation with EdDSA and RS256 credentials verifies, and so do their assertions",
        arguments: [
            (Generated.packedSelfEdDSA, COSEAlgorithm.edDSA), (Generated.packedSelfRS256, .rs256),
        ])
    func generatedSelfAttestation(vector: GeneratedVector, algorithm: COSEAlgorithm) throws {
        let result = try register(vector)
        #expect(result.format == "packed" && result.publicKey.algorithm == algorithm && result.userVerified)
        #expect(result.credentialID == [UInt8](hex: vector.credentialID))
        let assertion = try assert(vector, key: result.publicKey, stored: 6)
        #expect(assertion.signCount == 7 && assertion.userVerified && !assertion.backedUp)
    }

    @Test("a counter that does not grow past the stored one is a regression; growth from zero is accepted")
    func signCounter() throws {
        let key = try register(Generated.packedSelfEdDSA).publicKey
        #expect(try assert(Generated.packedSelfEdDSA, key: key, stored: 0).signCount == 7)
        #expect(reason { try assert(Generated.packedSelfEdDSA, key: key, stored: 7) } == .signCountRegression)
        #expect(reason { try assert(Generated.packedSelfEdDSA, key: key, stored: 8) } == .signCountRegression)
    }
}
